"""A ladder's health and the organizer's wrong commands, on a real referee (port 0, the
admin service, a SQLite store) with in-process bots over gRPC and `chinchon admin` as a
process.

A bot whose moves hang keeps its stream open: after ``suspend_after`` forfeits on time
in a row it is suspended (not seated: the others play on), its board row, its page, the
service's answers and the command line say why; reinstated by the organizer, one more
forfeit on time suspends it again at once; a new stream of it shows life, and that
stream is the one seated. Each wrong command is refused (exit 1, the reason) and
changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from chinchon.engine import Termination
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.ladder.ladders import Ladders
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.ladders import EntrantRow
from chinchon_referee.web.ladder_view import board_data, board_html, bot_data, bot_html

from tests.support.admin import AdminCli
from tests.support.fixture_types import SpawnBot, StartAdminServer
from tests.support.helpers import ADMIN
from tests.support.inproc import raw, sdk
from tests.support.ladder_run import LadderEnv, entrants

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)
#: The longest wait for a few games (a busy machine: each wait ends with its event).
WAIT = 240.0

#: Quick forfeits (a second a move and no bank, two strikes: a silent bot forfeits in
#: two seconds, a bot that answers never, however busy the machine); two forfeits on
#: time in a row suspend a bot.
HEALTH = """name = "health ladder"
concurrency = 1
seed = "health-seed"
suspend_after = 2
[rules]
score_limit = 30
[time_control]
per_move = 1.0
bank = 0.0
[policies]
max_strikes = 2
reconnect_grace = 1.0
"""


def _entrant(store: SqliteStore, lid: str, bot: str) -> EntrantRow:
    return next(e for e in store.entrants(lid) if e.bot == bot)


def _port(server: RunningServer) -> int:
    return int(server.target.rsplit(":", 1)[1])


async def _create(server: RunningServer, declaration: str) -> str:
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = lpb_grpc.LadderServiceStub(ch)  # type: ignore[no-untyped-call]
        made = await stub.CreateLadder(lpb.CreateLadderRequest(declaration=declaration),
                                       metadata=ADMIN_MD, timeout=30)
    return str(made.ladder.id)


async def _board(server: RunningServer, lid: str) -> dict[str, lpb.LeaderboardRow]:
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = lpb_grpc.LadderServiceStub(ch)  # type: ignore[no-untyped-call]
        got = await stub.GetLeaderboard(lpb.GetLeaderboardRequest(ladder_id=lid),
                                        metadata=ADMIN_MD, timeout=30)
    return {r.bot: r for r in got.rows}


async def test_a_bot_that_stops_answering_is_suspended_and_seated_again_when_it_shows_life(
        tmp_path: Path, admin_servers: StartAdminServer, bots: SpawnBot) -> None:
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "health.sqlite3")
    ladders: Ladders = server.extras["ladders"]
    env = LadderEnv(server, store, server.extras["director"], ladders)
    ladders.listeners.append(env.heard)
    lid = await _create(server, HEALTH + entrants(["a", "b", "h"]))
    cli = AdminCli(tmp_path, _port(server))
    await bots(sdk("greedy"), server, "a")
    await bots(sdk("random"), server, "b")
    await bots(raw("stall"), server, "h")  # its stream stays open; it never answers

    def h_games() -> list[int]:
        return [i for i, g in enumerate(env.rated) if "h" in g.players]

    await env.until(lambda: _entrant(store, lid, "h").suspended is not None, "h suspended",
                    WAIT)
    forfeited = [env.rated[i] for i in h_games()]
    assert len(forfeited) == 2  # suspend_after: seated no more after the second
    for g in forfeited:
        assert g.result is not None and g.result.termination is Termination.FORFEIT_TIMEOUT
        assert g.players[g.result.forfeited or 0] == "h"
    e = _entrant(store, lid, "h")
    assert e.time_forfeits == 2 and e.last_time_forfeit == forfeited[-1].finished

    # Suspended: the others play on without it, though its stream is still open.
    seen = len(env.rated)
    await env.until(lambda: len(env.rated) >= seen + 6, "six games after", WAIT)
    assert all("h" not in g.players for g in env.rated[seen:])
    assert server.referee.lobby.connected("h")
    row = (await _board(server, lid))["h"]
    assert row.suspended and row.time_forfeits_in_a_row == 2
    assert row.suspension.startswith("suspended: 2 forfeits in a row on time (last at ")
    assert row.suspended_since.seconds and row.last_time_forfeit.seconds
    assert not (await _board(server, lid))["a"].suspended
    shown = await asyncio.to_thread(cli, "ladder", "board", lid)
    assert "h suspended: 2 forfeits in a row on time (last at" in shown
    assert f"chinchon admin ladder reinstate {lid} h" in shown
    shown = await asyncio.to_thread(cli, "ladder", "bot", lid, "h")
    assert "h suspended: 2 forfeits in a row on time" in shown
    board = board_data(store, lid)
    assert board is not None
    assert [r["suspension"] for r in board["rows"] if r["bot"] == "h"] == [row.suspension]
    assert row.suspension in board_html(board).decode()
    page = bot_data(store, lid, "h")
    assert page is not None and row.suspension in bot_html(page).decode()

    # Reinstated by the organizer: it is seated (on its silent stream), and one more
    # forfeit on time suspends it again at once.
    assert "h reinstated" in await asyncio.to_thread(cli, "ladder", "reinstate", lid, "h")
    before = len(h_games())
    await env.until(lambda: _entrant(store, lid, "h").suspended is not None,
                    "h suspended again", WAIT)
    assert len(h_games()) == before + 1 and _entrant(store, lid, "h").time_forfeits == 3

    # A new stream of h (a bot that answers) shows life: the suspension is lifted and
    # that stream is seated, not the silent one, which stays open.
    since = len(env.rated)
    await bots(sdk("greedy"), server, "h")
    await env.until(lambda: any("h" in g.players for g in env.rated[since:]), "h seated again",
                    WAIT)
    back = next(g for g in env.rated[since:] if "h" in g.players)
    assert back.result is not None and back.result.termination is not Termination.FORFEIT_TIMEOUT
    e = _entrant(store, lid, "h")
    assert e.suspended is None and e.time_forfeits == 0
    assert not (await _board(server, lid))["h"].suspended
    out = await asyncio.to_thread(cli, "ladder", "reinstate", lid, "h", code=1)
    assert "FAILED_PRECONDITION" in out and "h is not suspended" in out


async def _refused(call: object, request: object, code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(request, metadata=ADMIN_MD, timeout=30)  # type: ignore[operator]
    assert err.value.code() == code, err.value.details()
    assert reason in (err.value.details() or "")


async def test_each_wrong_command_is_refused_with_its_reason_and_changes_nothing(
        tmp_path: Path, admin_servers: StartAdminServer) -> None:
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "wrong.sqlite3")
    lid = await _create(server, HEALTH + entrants(["a", "b"]))
    cli = AdminCli(tmp_path, _port(server))
    NF, AE, FP, IA = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS,
                      grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT)
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = lpb_grpc.LadderServiceStub(ch)  # type: ignore[no-untyped-call]
        await _refused(stub.EnterLadder, lpb.EnterLadderRequest(
            ladder_id=lid, bot="c", inherits="no-such-bot"), NF,
            "inherits: no entrant 'no-such-bot' in ladder")
        await _refused(stub.EnterLadder, lpb.EnterLadderRequest(ladder_id=lid, bot="a"), AE,
                       f"a is entered in ladder {lid} already")
        await _refused(stub.RemoveFromLadder, lpb.RemoveFromLadderRequest(
            ladder_id=lid, bot="nobody"), NF, f"nobody is not entered in ladder {lid}")
        await _refused(stub.ReinstateLadderBot, lpb.ReinstateLadderBotRequest(
            ladder_id=lid, bot="a"), FP, "a is not suspended")
        await _refused(stub.ReinstateLadderBot, lpb.ReinstateLadderBotRequest(
            ladder_id=lid, bot="nobody"), NF, "nobody is not entered")
        await _refused(stub.CreateLadder, lpb.CreateLadderRequest(
            declaration=HEALTH + entrants(["x"]) + '\n[[entrants]]\nname = "y"\n'
            'inherits = "no-such-bot"\n'), IA, "entrants[1].inherits: no entrant 'no-such-bot'")
        await _refused(stub.CreateLadder, lpb.CreateLadderRequest(
            declaration=HEALTH.replace("suspend_after = 2", "suspend_after = -1")), IA,
            "suspend_after: 0 (never) to 100, got -1")
        assert (await stub.RemoveFromLadder(lpb.RemoveFromLadderRequest(
            ladder_id=lid, bot="b"), metadata=ADMIN_MD, timeout=30)).removed
        await _refused(stub.RemoveFromLadder, lpb.RemoveFromLadderRequest(
            ladder_id=lid, bot="b"), FP, f"b was removed from ladder {lid} already")
        await _refused(stub.EnterLadder, lpb.EnterLadderRequest(
            ladder_id=lid, bot="b", inherits="a"), FP, "comes back with its own rating")
    # Nothing changed: no bot registered or entered, no ladder declared.
    assert "c" not in dict(store.bots())
    assert [(e.bot, e.removed) for e in store.entrants(lid)] == [("a", False), ("b", True)]
    assert [r.id for r in store.ladders()] == [lid]

    async def refused(*args: str) -> str:
        return str(await asyncio.to_thread(cli, "ladder", *args, code=1))

    out = await refused("enter", lid, "c", "--inherits", "no-such-bot")
    assert "NOT_FOUND" in out and "no entrant 'no-such-bot'" in out
    assert "rating" not in out.split("no entrant")[0]  # no "from ...'s rating" claimed
    out = await refused("enter", lid, "a")
    assert "ALREADY_EXISTS" in out and "already" in out and "inherit" not in out
    out = await refused("remove", lid, "nobody")
    assert "NOT_FOUND" in out and "nobody is not entered" in out
    out = await refused("reinstate", lid, "a")
    assert "FAILED_PRECONDITION" in out and "a is not suspended" in out
    toml = tmp_path / "bad.toml"
    toml.write_text(HEALTH + '[[entrants]]\nname = "y"\ninherits = "no-such-bot"\n')
    out = await refused("create", str(toml))
    assert "INVALID_ARGUMENT" in out and "entrants[0].inherits: no entrant 'no-such-bot'" in out
    assert "c" not in dict(store.bots()) and [r.id for r in store.ladders()] == [lid]
