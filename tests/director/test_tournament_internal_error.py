"""A game stopped by an internal error of the referee, in a tournament."""

from __future__ import annotations

import asyncio

import pytest
from chinchon.v1 import game_pb2 as g
from chinchon_referee.config import Policies
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import spec, stop
from tests.support.inproc import sdk
from tests.support.referee import Bot, referee_fails
from tests.support.tournament import (
    PLAYED,
    InProcess,
    check_record,
    spec_dict,
)

# -- an internal error of the referee ------------------------------------------------------


async def test_the_bots_of_a_game_stopped_by_an_internal_error_hear_it_and_play_on(
    monkeypatch: pytest.MonkeyPatch, servers: StartServer,
) -> None:
    """Both bots of a game that the referee's internal error stops get a game_ended with
    TERMINATION_ABORTED and the reason; their streams go back to the lobby and play the
    next game normally."""
    server = await servers(["a", "b"])
    failed = referee_fails(monkeypatch, "faulty", 1)
    a, b = Bot(server.target, "a"), Bot(server.target, "b")
    try:
        await a.back()
        await b.back()
        for game_id in ("faulty", "after"):
            s = spec(game_id, ["a", "b"], policies=Policies(reconnect_grace=5.0))
            game = asyncio.ensure_future(server.referee.play(s))
            ended = await asyncio.gather(a.play_on(), b.play_on())
            out = await asyncio.wait_for(game, 30)
            for seat, msg in enumerate(ended):
                got = msg.game_ended
                assert got.game_id == game_id
                assert g.Termination.Name(got.result.termination) == out.termination
                assert got.seat == seat
                if game_id == "faulty":
                    assert got.result.termination == g.TERMINATION_ABORTED
                    assert got.result.summary == "the referee hit an internal error"
                else:
                    assert got.result.termination in (g.TERMINATION_NORMAL,
                                                      g.TERMINATION_CHINCHON)
        assert failed == ["faulty"]
    finally:
        await a.drop()
        await b.drop()


@pytest.mark.parametrize("failures", [1, 2])
async def test_a_game_stopped_by_an_internal_error_is_played_again_once(
    env: InProcess, bots: SpawnBot, monkeypatch: pytest.MonkeyPatch, failures: int,
) -> None:
    """The referee hits an internal error in the middle of a tournament game (not the
    bots' fault). Its bots hear that the game ended ABORTED; the game is played once
    more, from a new deal, and counts. If it fails again it is recorded as ABORTED and
    left out of the standings, and the tournament goes on to its end either way."""

    spec = TournamentSpec.from_dict(spec_dict("faulty", ["a", "b"], games_per_pairing=4,
                                              concurrency=1))
    tid, _ = env.director.create(spec)
    victim = env.store.games(tid)[1].id
    failed = referee_fails(monkeypatch, victim, failures)
    procs = {b: await bots(sdk("greedy"), env.server, b) for b in ("a", "b")}
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    env.watch(tid)
    await asyncio.wait_for(env.director.run(tid), 90)
    await env.watched()
    await stop(*procs.values())
    assert failed == [victim] * failures
    games = {x.id: x for x in env.store.games(tid)}
    assert len(games) == 4 and all(x.status == "finished" for x in games.values())
    bad = games.pop(victim)
    assert bad.voided == 1  # set back to scheduled once, after the first failure
    for x in games.values():
        assert x.voided == 0 and x.result.termination in PLAYED
    replays = [e for e in env.events if e.game_id == victim and "played again" in e.message]
    assert len(replays) == 1
    assert replays[0].message == (f"game {victim} was stopped by an internal error of the "
                                  "referee: it will be played again from a new deal")
    # The referee noted each failure (what the bots hear of it is checked above, with
    # raw clients).
    aborted = [i for i in env.server.referee.incidents if i["kind"] == "aborted"]
    assert [i["game_id"] for i in aborted] == [victim] * failures
    assert aborted[0]["message"] == "the referee hit an internal error"
    st = env.director.standings(tid)
    if failures == 1:
        assert bad.result.termination in PLAYED
        check_record(bad.record)
        assert st.games == 4
    else:
        assert bad.result.termination == "TERMINATION_ABORTED"
        assert bad.result.summary == "the referee hit an internal error"
        assert st.games == 3  # the aborted game does not count
    assert env.events[-1].message == "tournament finished"
