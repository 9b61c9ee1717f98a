"""The heartbeat of a process sharing the database (cluster/member.py), in this process
against a real PostgreSQL database: a callback that fails does not stop it."""

from __future__ import annotations

import pytest
from chinchon_referee.auth import TokenBook
from chinchon_referee.cluster.member import Cluster
from chinchon_referee.config import RefereeConfig
from chinchon_referee.referee import Referee
from chinchon_referee.storage import open_store

from tests.support.waits import until


async def test_a_callback_that_raises_does_not_stop_the_heartbeat(
        pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """A bug in what runs after a heartbeat (here: a callback that raises once) is
    logged, and the heartbeats go on. Before, it ended the heartbeat's task without a
    word: the process renewed no lease again, and lost every game it played."""
    store = open_store(pg_url)
    cluster = Cluster(store, Referee(RefereeConfig()), TokenBook(), lease=2.0)
    beats = 0

    def callback() -> None:
        nonlocal beats
        beats += 1
        if beats == 2:  # the first heartbeat of the loop (the first is start's own)
            raise RuntimeError("a bug in a callback")

    cluster.on_beat(callback)
    try:
        await cluster.start("127.0.0.1:1", "")
        await until(lambda: beats >= 5, "heartbeats after the failing one", 60)
        crashed = [getattr(r, "fields", {}) for r in caplog.records
                   if r.getMessage() == "heartbeat_crashed"]
        assert crashed and "a bug in a callback" in crashed[0]["error"], crashed
    finally:
        await cluster.stop()
        store.close()
