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
    assert await env.server.referee.lobby.wait_all(["a", "b"], 20)
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
