"""A watch of a tournament ends on an event of its final status, whichever process
stored that status and whatever the bus has delivered: sharing the database, the run
here may find the tournament finished by another process (``set_status`` returns False
and tells nothing) and close its watches before the other's word arrives. CI saw
``WatchTournament`` end on a "game ended" event of a running tournament."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from chinchon_referee.director.events import EventHub, TournamentEvent
from chinchon_referee.storage import open_store
from chinchon_referee.storage.rows import TournamentRow
from chinchon_referee.vocabulary import TournamentStatus


def _hub(tmp_path: Path, track: bool) -> EventHub:
    store = open_store(str(tmp_path / "events.sqlite3"))
    store.create_tournament(TournamentRow("t1", "cup", {"name": "cup"},
                                          TournamentStatus.RUNNING, time.time()), [])
    hub = EventHub(store)
    hub.track = track
    hub.prime("t1", TournamentStatus.RUNNING, (2, 0))
    return hub


async def _watch(hub: EventHub) -> tuple[asyncio.Task[list[TournamentEvent]], asyncio.Event]:
    began = asyncio.Event()

    async def collect() -> list[TournamentEvent]:
        out = []
        async for ev in hub.watch("t1"):
            out.append(ev)
            began.set()
        return out

    task = asyncio.create_task(collect())
    await asyncio.wait_for(began.wait(), 30)
    return task, began


async def test_a_watch_closed_after_another_process_finished_ends_on_the_final_status(
        tmp_path: Path) -> None:
    hub = _hub(tmp_path, track=True)
    task, _ = await _watch(hub)
    hub.game_finished("t1", "t1-g0")
    hub.emit("t1", "game t1-g0 ended", "t1-g0")
    hub.status_set("t1", TournamentStatus.FINISHED)  # stored by the other process first
    hub.close("t1")
    events = await asyncio.wait_for(task, 30)
    assert [e.message for e in events] == ["tournament is running", "game t1-g0 ended",
                                           "tournament is finished"]
    assert events[-1].status is TournamentStatus.FINISHED
    assert (events[-1].games_total, events[-1].games_done) == (2, 1)


async def test_a_watch_told_the_end_by_the_bus_is_not_told_it_twice(tmp_path: Path) -> None:
    hub = _hub(tmp_path, track=True)
    task, _ = await _watch(hub)
    hub.deliver(TournamentEvent(time.time(), "t1", TournamentStatus.FINISHED, 0, 0,
                                "tournament finished"))
    hub.status_set("t1", TournamentStatus.FINISHED)
    hub.close("t1")
    events = await asyncio.wait_for(task, 30)
    assert [e.message for e in events] == ["tournament is running", "tournament finished"]


async def test_a_watch_of_a_paused_tournament_ends_without_a_final_status(
        tmp_path: Path) -> None:
    """The referee shuts down: the tournament stays running, and its watch says so."""
    hub = _hub(tmp_path, track=False)
    task, _ = await _watch(hub)
    hub.emit("t1", "the referee is shutting down")
    hub.close("t1")
    events = await asyncio.wait_for(task, 30)
    assert [e.status for e in events] == [TournamentStatus.RUNNING] * 2
