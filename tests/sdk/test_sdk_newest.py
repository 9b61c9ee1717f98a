"""After a stall the Python SDK answers the newest request only: requests replaced
meanwhile (by the default the referee played, by a newer request) are not answered, so
no stale answer is sent and the live request is answered in time (real server on port
0, a real SDK bot process)."""

from __future__ import annotations

import json
import sys

import pytest
from chinchon_referee.referee import IncidentKind
from chinchon_referee.service.server import RunningServer

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ROOT

STALL_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "stall_bot.py")]


@pytest.mark.parametrize("server", [["stall"]], indirect=True)
async def test_after_a_stall_the_sdk_skips_superseded_requests(
        server: RunningServer, bots: SpawnBot) -> None:
    # 2 s per move, no bank: the first request expires at 2 s, the second at about 4 s,
    # the third at about 6 s; the bot is back after 4.5 s, with the first two replaced,
    # and 1.5 s left to answer the third (a loaded machine's bot took more than the 0.5 s
    # an earlier version of this test left it). Should the referee's second default come
    # after 4.5 s, the bot answers that request instead: one fewer superseded, one fewer
    # default, the same checks.
    proc = await bots([*STALL_BOT, "--stall", "4.5", "--per-move", "2.0"], server, "stall")
    assert await proc.wait(60) == 0, list(proc.err)
    report = json.loads(proc.out[-1])
    assert report["games"] == 1
    assert report["superseded"] >= 1, report
    assert len(report["defaults"]) == report["superseded"], report  # one strike each, no more
    assert "ERROR_CODE_STALE_REQUEST" not in report["errors"], report
    stale = [i for i in server.referee.incidents
             if i["kind"] is IncidentKind.PROTOCOL and "not outstanding" in str(i.get("message", ""))]
    assert stale == [], stale
