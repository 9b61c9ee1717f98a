"""The ladder service's reads under ``chinchon serve``: answered by the organizer's
worker process, relayed by the referee, equal to what the referee answers in-process.

A database holds an open ladder of four entrants with rated games (their records
large, so that an export outlasts gRPC's buffers). The same calls are made to an
in-process server (``add_admin_service`` without a worker: every call answered in the
referee) on one copy of it and to a real ``chinchon serve`` (its worker answering) on
another; the answers are equal, field for field, except the rows of the bot connected
to the served referee, which say so. Killed mid-export, the worker fails the ladder
call cleanly (UNAVAILABLE, saying why) and is started again for the next."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.engine import Outcome, Termination
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon.v1 import referee_pb2 as rpb
from chinchon.v1 import referee_pb2_grpc as rpb_grpc
from chinchon_referee.auth import TokenBook, digest
from chinchon_referee.ladder.ratings import PRIOR
from chinchon_referee.ladder.runner import rate
from chinchon_referee.service.server import start_server
from chinchon_referee.service.tournaments import add_admin_service
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.ladders import LadderRow, LadderStatus

from tests.support.helpers import ADMIN, bot_token
from tests.support.ladder_run import ladder_spec
from tests.support.serve import Serve, free_port, organizer_pid
from tests.support.waits import until_sync

MD = (("authorization", f"Bearer {ADMIN}"),)
BOTS = ["b0", "b1", "b2", "b3"]
LID = "l-archive"
GAMES = 240
#: A rated game's record: about 100 kB (the export of every record is ~24 MB).
RECORD = {"moves": ["x" * 100] * 1000}
PAIRS = list(itertools.combinations(BOTS, 2))


def ladder_db(db: Path) -> None:
    """An open ladder of BOTS (registered, with their tokens) and GAMES rated games."""
    store = SqliteStore(str(db))
    try:
        store._db.execute("PRAGMA synchronous=OFF")  # a fixture: no fsync per row
        spec = ladder_spec(BOTS).with_seed().to_dict(with_secrets=True)
        for e in spec["entrants"]:
            e.pop("token", None)
        store.create_ladder(LadderRow(LID, "archive", spec, LadderStatus.OPEN, 1.0e9))
        for b in BOTS:
            store.add_bot(b, digest(bot_token(b)))
            store.enter_ladder(LID, b, (PRIOR.mu, PRIOR.sigma))
        for i in range(GAMES):
            players = list(PAIRS[i % len(PAIRS)])
            gid = f"{LID}-g{i}"
            assert store.begin_ladder_game(LID, gid, players) == set()
            winner = i % 2
            outcome = Outcome(Termination.NORMAL, None, (winner,),
                              (0, 50) if winner == 0 else (50, 0), 3, "test")
            places = [0, 1] if winner == 0 else [1, 0]
            assert store.finish_ladder_game(gid, outcome, places,
                                            [{"decisions": 4, "think_time": 0.5}] * 2,
                                            dict(RECORD, game_id=gid), rate) is not None
    finally:
        store.close()


def requests() -> list[tuple[str, Any]]:
    return [("ListLadders", lpb.ListLaddersRequest()),
            ("GetLeaderboard", lpb.GetLeaderboardRequest(ladder_id=LID)),
            ("GetLadderBot", lpb.GetLadderBotRequest(ladder_id=LID, bot="b0", limit=20)),
            ("GetLeaderboard", lpb.GetLeaderboardRequest(ladder_id="l-none")),
            ("GetLadderBot", lpb.GetLadderBotRequest(ladder_id=LID, bot="b0", limit=5000))]


EXPORT = lpb.ExportLadderRequest(ladder_id=LID, records=True, snapshot_every=7)


def call(stub: lpb_grpc.LadderServiceStub, name: str, request: Any) -> Any:
    """The answer, or the status (code, details) it failed with."""
    try:
        return getattr(stub, name)(request, metadata=MD, timeout=120)
    except grpc.RpcError as e:
        return (e.code(), e.details())


def in_process(db: Path) -> tuple[list[Any], list[lpb.ExportLadderResponse]]:
    """The answers of a server answering every call itself, on ``db``."""
    async def run() -> tuple[list[Any], list[lpb.ExportLadderResponse]]:
        store = SqliteStore(str(db))
        server = await start_server("127.0.0.1:0", None, TokenBook(ADMIN),
                                    add_services=lambda s, r, t: add_admin_service(s, r, t, store))
        try:
            def ask() -> tuple[list[Any], list[lpb.ExportLadderResponse]]:
                with grpc.insecure_channel(server.target, options=[
                        ("grpc.max_receive_message_length", 64 << 20)]) as ch:
                    stub = lpb_grpc.LadderServiceStub(ch)
                    return ([call(stub, n, r) for n, r in requests()],
                            list(stub.ExportLadder(EXPORT, metadata=MD, timeout=300)))
            return await asyncio.to_thread(ask)
        finally:
            await server.stop(0)
            await server.extras["ladders"].settle(5.0)
            store.close()

    return asyncio.run(run())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Serve, lpb_grpc.LadderServiceStub, Path]]:
    """``chinchon serve`` on a ladder database, and (a copy of it to read in-process)."""
    db = tmp_path / "db.sqlite3"
    ladder_db(db)
    copy = tmp_path / "copy.sqlite3"
    shutil.copy(db, copy)
    server = Serve(tmp_path, free_port(), db, 1)
    channel = grpc.insecure_channel(f"127.0.0.1:{server._listening()[0]['port']}",
                                    options=[("grpc.max_receive_message_length", 64 << 20)])
    try:
        yield server, lpb_grpc.LadderServiceStub(channel), copy
    finally:
        channel.close()
        server.stop()


class Connected:
    """A Play stream of ``bot`` to ``port``, open (idle in the lobby) until closed."""

    def __init__(self, port: int, bot: str) -> None:
        self.done = threading.Event()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")

        def hello() -> Iterator[rpb.PlayRequest]:
            yield rpb.PlayRequest(hello=rpb.Hello(client="ladder-test"))
            self.done.wait(300)

        self.play = rpb_grpc.RefereeServiceStub(self.channel).Play(
            hello(), metadata=(("authorization", f"Bearer {bot_token(bot)}"),), timeout=300)
        assert next(self.play).HasField("welcome")

    def close(self) -> None:
        self.done.set()
        self.play.cancel()
        self.channel.close()


def unmarked(msg: Any) -> Any:
    """``msg`` with every leaderboard row's connection marks cleared (a copy)."""
    out = type(msg)()
    out.CopyFrom(msg)
    rows = (list(out.rows) if hasattr(out, "rows") else [])
    if isinstance(out, lpb.GetLadderBotResponse):
        rows = [out.row]
    if isinstance(out, lpb.ExportLadderResponse) and out.HasField("snapshot"):
        rows = list(out.snapshot.rows)
    for r in rows:
        r.connected, r.idle_streams = False, 0
    return out


def marks(rows: Any) -> dict[str, tuple[bool, int]]:
    return {r.bot: (r.connected, r.idle_streams) for r in rows}


def test_ladder_reads_are_the_workers_and_equal_the_in_process_answers(served) -> None:  # type: ignore[no-untyped-def]
    server, stub, copy = served
    port = server._listening()[0]["port"]
    expected, expected_export = in_process(copy)
    bot = Connected(port, "b0")
    try:
        got = [call(stub, n, r) for n, r in requests()]
        export = list(stub.ExportLadder(EXPORT, metadata=MD, timeout=300))
    finally:
        bot.close()
    listed, board, page, missing, too_many = got
    # Bad requests fail as in-process, word for word.
    assert missing == expected[3] and missing[0] is grpc.StatusCode.NOT_FOUND
    assert too_many == expected[4] and too_many[0] is grpc.StatusCode.INVALID_ARGUMENT
    assert listed == expected[0] and listed.ladders[0].games_rated == GAMES
    # The referee marked its own connected bot; every other field is the worker's.
    assert marks(board.rows) == {"b0": (True, 1), "b1": (False, 0), "b2": (False, 0),
                                 "b3": (False, 0)}
    assert unmarked(board) == expected[1] and len(board.rows) == 4
    assert marks([page.row]) == {"b0": (True, 1)}
    assert unmarked(page) == expected[2] and len(page.games) == 20
    assert len(export) == len(expected_export) > GAMES
    snaps = [m for m in export if m.HasField("snapshot")]
    assert snaps and all(marks(m.snapshot.rows)["b0"] == (True, 1) for m in snaps)
    assert [unmarked(m) for m in export] == expected_export
    assert sum(m.HasField("game") and bool(m.game.record_json) for m in export) == GAMES


def test_a_killed_worker_fails_a_ladder_call_cleanly_and_is_started_again(served) -> None:  # type: ignore[no-untyped-def]
    server, stub, _ = served
    board = call(stub, "GetLeaderboard", lpb.GetLeaderboardRequest(ladder_id=LID))
    assert isinstance(board, lpb.GetLeaderboardResponse)
    export = stub.ExportLadder(EXPORT, metadata=MD, timeout=300)
    assert next(export).HasField("game")
    pid = organizer_pid(server)
    assert pid is not None
    subprocess.run(["kill", "-9", str(pid)], check=True)
    with pytest.raises(grpc.RpcError) as cut:
        for _ in export:
            pass
    assert cut.value.code() is grpc.StatusCode.UNAVAILABLE, cut.value
    assert "organizer's worker process" in cut.value.details(), cut.value.details()
    # What changes the ladder is the referee's own: it answers while the worker is away.
    paused = stub.SetLadderStatus(lpb.SetLadderStatusRequest(
        ladder_id=LID, status=lpb.LADDER_STATUS_PAUSED), metadata=MD, timeout=60)
    assert paused.changed
    until_sync(lambda: organizer_pid(server) not in (None, pid), "no worker again", 60)
    again = call(stub, "GetLeaderboard", lpb.GetLeaderboardRequest(ladder_id=LID))
    assert isinstance(again, lpb.GetLeaderboardResponse)
    assert list(again.rows) == list(board.rows)
    assert again.ladder.status == lpb.LADDER_STATUS_PAUSED
    whole = list(stub.ExportLadder(EXPORT, metadata=MD, timeout=300))
    assert sum(m.HasField("game") for m in whole) == GAMES
