"""Cancelling a tournament in process: games in flight stop, watchers end."""

from __future__ import annotations

import asyncio
from collections import Counter

from chinchon_referee.director.events import TournamentEvent
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.fixture_types import SpawnBot
from tests.support.inproc import sdk
from tests.support.tournament import (
    InProcess,
    spec_dict,
)
from tests.support.waits import until

#: A negative check's window: time in which a cancelled tournament must not go on.
QUIET = 2.0


# -- cancel and watch (in process) ---------------------------------------------------------


async def test_cancel_stops_games_in_flight_and_ends_watchers(env: InProcess, bots: SpawnBot) -> None:
    spec = TournamentSpec.from_dict(spec_dict("cancel", ["a", "b"], games_per_pairing=20,
                                              concurrency=1, rules={}))
    tid, _ = env.director.create(spec)
    await bots(sdk("greedy"), env.server, "a")
    await bots(sdk("greedy"), env.server, "b")
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    env.watch(tid)
    env.director.start(tid)

    def finished_and_running() -> bool:
        gs = env.store.games(tid)
        return any(x.status == "finished" for x in gs) and any(x.status == "running" for x in gs)

    await until(finished_and_running, "a game finished with another running", 60)
    # A late watcher that takes the first event just as the tournament ends.
    late = env.director.watch(tid)
    first = await late.__anext__()
    assert first.message == "tournament is running"
    await env.director.cancel(tid)

    async def drain() -> list[TournamentEvent]:
        return [ev async for ev in late]

    rest = await asyncio.wait_for(drain(), 5)
    assert rest[-1].message == "tournament cancelled"
    assert all(ev.result is not None for ev in rest[:-1])  # at most a game that ended
    at_cancel = {x.id: (x.status, x.voided) for x in env.store.games(tid)}
    await env.watched(5)
    assert env.events[-1].message == "tournament cancelled"
    assert env.events[-1].status == "cancelled"
    # Nothing is played or recorded for a cancelled tournament.
    await asyncio.sleep(QUIET)  # a negative check: nothing may happen meanwhile
    after = {x.id: (x.status, x.voided) for x in env.store.games(tid)}
    assert after == at_cancel
    assert "running" not in {s for s, _ in after.values()}
    assert sum(v for _, v in after.values()) == 1  # the game in flight was voided
    assert env.server.referee.games_running == 0
    assert env.store.tournament(tid).status == "cancelled"
    done = [x for x in env.store.games(tid) if x.status == "finished"]
    assert env.ended() == Counter({x.id: 1 for x in done})


async def test_cancelling_a_tournament_mid_game_leaves_its_bots_streams_to_their_other_one(
        env: InProcess, bots: SpawnBot) -> None:
    """A bot's stream serves every tournament that declares it. Cancelling one in the
    middle of a game stops that game between two writes to its bots (Referee.cancel):
    a task cancelled while a write was in flight would leave the write with gRPC, which
    refuses the stream's next write and ends it, and the bot would lose its games of the
    other tournament. Five tournaments are cancelled mid-game; then the one created
    first, which kept the bots from being dismissed, plays every game normally on the
    same streams. Whether a cancel lands mid-write is a matter of timing: on an idle
    machine it did not in six runs of the old code (a write to a bot that reads is
    short), so this checks the scenario end to end, and tests/referee/test_write_watch.py
    shows the break itself and that ``cancel_between_writes`` (which Referee.cancel
    calls) avoids it."""
    keep, _ = env.director.create(TournamentSpec.from_dict(spec_dict(
        "kept", ["a", "b"], games_per_pairing=4, concurrency=1)))
    await bots(sdk("greedy"), env.server, "a")
    await bots(sdk("greedy"), env.server, "b")
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    streams = {b: env.server.referee.lobby.connected(b) for b in ("a", "b")}
    for i in range(5):
        tid, _ = env.director.create(TournamentSpec.from_dict(spec_dict(
            f"called-off-{i}", ["a", "b"], games_per_pairing=20, concurrency=1, rules={})))
        env.director.start(tid)

        def in_a_game(tid: str = tid) -> bool:
            return (env.server.referee.games_running > 0
                    and any(g.status == "running" for g in env.store.games(tid)))

        await until(in_a_game, f"a game of tournament {i} under way", 60)
        await env.director.cancel(tid)
        assert env.store.tournament(tid).status == "cancelled"
    await until(lambda: env.server.referee.games_running == 0, "the stopped games ended", 30)
    assert {b: env.server.referee.lobby.connected(b) for b in ("a", "b")} == streams
    env.director.start(keep)
    await until(lambda: env.store.tournament(keep).status == "finished", "the kept one played", 120)
    games = env.store.games(keep)
    assert len(games) == 4 and {g.status for g in games} == {"finished"}
    ends = Counter(g.record["result"]["termination"] for g in games if g.record is not None)
    assert set(ends) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}, ends
