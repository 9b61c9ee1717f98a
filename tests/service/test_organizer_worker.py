"""The organizer's worker process of ``chinchon serve``: the admin service's exports,
standings, listings and declarations are answered there, beside the games.

A real ``chinchon serve`` (SQLite), real SDK bots playing a tournament, the organizer's
calls over gRPC. Killed mid-export, the worker fails that call cleanly (UNAVAILABLE,
saying why), the games play on, and the worker started again answers the next call; a
huge declaration built meanwhile holds no game back."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import grpc
import pytest
from chinchon.engine import Outcome, play_game
from chinchon.strategies import BUILTIN_BOTS
from chinchon.v1 import referee_pb2 as rpb
from chinchon.v1 import referee_pb2_grpc as rpb_grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.director.declare import declare
from chinchon_referee.referee.seats import SeatStats
from chinchon_referee.storage import SqliteStore
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.helpers import ADMIN
from tests.support.serve import (
    Serve,
    admin_spec,
    db_games,
    free_port,
    launch_sdk_bots,
    organizer_pid,
    stop_all,
)
from tests.support.waits import until_sync

MD = (("authorization", f"Bearer {ADMIN}"),)


def finished_tournament(db: Path, games: int) -> str:
    """A finished round-robin of ``games`` games in ``db`` (one engine game's record
    under every game id): an export long enough to be cut in the middle."""
    store = SqliteStore(str(db))
    try:
        store._db.execute("PRAGMA synchronous=OFF")  # a fixture: no fsync per row
        spec = TournamentSpec.from_dict({"name": "archive", "table_size": 2,
                                         "games_per_pairing": games, "start": "manual",
                                         "participants": [{"name": "x1"}, {"name": "x2"}]})
        tid, _ = declare(store, TokenBook(ADMIN), spec)
        rows = store.games(tid)
        bots = [BUILTIN_BOTS["greedy"](s) for s in range(2)]
        _, rec = play_game(spec.rules, bots, "archive", rows[0].deal_id, rows[0].players)
        record = json.loads(json.dumps(rec))
        for row in rows:
            row.record = dict(record, game_id=row.id)
            row.result = Outcome.from_json(record["result"])
            row.stats = [asdict(SeatStats()) for _ in row.players]
            store.finish_game(row)
        return tid
    finally:
        store.close()


def finished(db: Path, tid: str) -> int:
    return sum(1 for g in db_games(db, tid).values() if g["status"] == "finished")


@pytest.fixture
def running(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A server whose database holds a finished 2,000-game tournament, playing a
    round-robin of SDK bots: (server, stub, archive id, live id, db)."""
    db = tmp_path / "db.sqlite3"
    archive = finished_tournament(db, 2000)
    server = Serve(tmp_path, free_port(), db, 1)
    bots: list[subprocess.Popen[bytes]] = []
    channel = grpc.insecure_channel(f"127.0.0.1:{server._listening()[0]['port']}",
                                    options=[("grpc.max_receive_message_length", 64 << 20)])
    try:
        stub = tpb_grpc.TournamentServiceStub(channel)
        made = stub.CreateTournament(tpb.CreateTournamentRequest(spec=admin_spec(
            "live", ["ann", "ben"], score_limit=30, reconnect_grace=30.0,
            games_per_pairing=400, concurrency=2, seed="organizer-worker")),
            metadata=MD, timeout=60)
        live = made.tournament.id
        port = server._listening()[0]["port"]
        bots = launch_sdk_bots(tmp_path, port, {"ann": "greedy", "ben": "random"}, streams=2)
        until_sync(lambda: finished(db, live) >= 1, "no game was played", 120)
        yield server, stub, archive, live, db
    finally:
        channel.close()
        stop_all(bots, [server])


def test_a_killed_worker_fails_its_call_cleanly_and_is_started_again(running) -> None:  # type: ignore[no-untyped-def]
    server, stub, archive, live, db = running
    before = stub.ExportRecords(tpb.ExportRecordsRequest(tournament_id=archive),
                                metadata=MD, timeout=120)
    first = next(before)
    assert first.HasField("record")
    pid = organizer_pid(server)
    assert pid is not None
    played = finished(db, live)
    subprocess.run(["kill", "-9", str(pid)], check=True)
    with pytest.raises(grpc.RpcError) as cut:
        for _ in before:
            pass
    assert cut.value.code() is grpc.StatusCode.UNAVAILABLE, cut.value
    assert "organizer's worker process" in cut.value.details(), cut.value.details()
    # The games play on, and the worker is started again: the next call works whole.
    until_sync(lambda: finished(db, live) >= played + 2, "the games stopped", 120)
    until_sync(lambda: organizer_pid(server) not in (None, pid), "no worker again", 60)
    got = list(stub.ExportRecords(tpb.ExportRecordsRequest(tournament_id=archive),
                                  metadata=MD, timeout=300))
    assert sum(m.HasField("record") for m in got) == 2000
    assert got[-1].standings.records == 2000
    page = stub.ListGames(tpb.ListGamesRequest(tournament_id=archive, page_size=5),
                          metadata=MD, timeout=60)
    assert len(page.games) == 5 and page.next_page_token


def test_a_huge_declaration_holds_no_game_back(running) -> None:  # type: ignore[no-untyped-def]
    server, stub, _, live, _ = running
    events: list[tpb.WatchTournamentResponse] = []
    watching = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=live),
                                    metadata=MD, timeout=600)

    def follow() -> None:
        with contextlib.suppress(grpc.RpcError):  # cancelled at the end
            events.extend(watching)

    threading.Thread(target=follow, daemon=True).start()
    until_sync(lambda: events, "the watch did not begin", 30)
    spec = tpb.TournamentSpec(name="huge", table_size=2, games_per_pairing=100,
                              participants=[tpb.Participant(name=f"h{i}") for i in range(44)],
                              start=tpb.TOURNAMENT_START_MANUAL)  # 94,600 games
    declared: list[tpb.CreateTournamentResponse] = []
    during: list[int] = []

    def create() -> None:
        declared.append(stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                              metadata=MD, timeout=600))
        during.append(sum(1 for e in events if " ended: " in e.message))

    ended_before = sum(1 for e in events if " ended: " in e.message)
    maker = threading.Thread(target=create)
    maker.start()
    maker.join(600)
    assert declared and declared[0].tournament.games_total == 94600
    # Games ended while it was declared (the watch heard them before the answer came).
    assert during[0] > ended_before, (during, ended_before)
    assert len(declared[0].participants) == 44 and all(p.token for p in declared[0].participants)
    # Its new bots' tokens work on the referee at once (registered there, not only stored).
    token = declared[0].participants[0].token
    done = threading.Event()

    def requests() -> Iterator[rpb.PlayRequest]:
        yield rpb.PlayRequest(hello=rpb.Hello(client="organizer-test"))
        done.wait(60)  # the stream stays open until the welcome is read

    with grpc.insecure_channel(f"127.0.0.1:{server._listening()[0]['port']}") as ch:
        play = rpb_grpc.RefereeServiceStub(ch).Play(
            requests(), metadata=(("authorization", f"Bearer {token}"),), timeout=60)
        assert next(play).HasField("welcome")
        done.set()
        play.cancel()
    watching.cancel()
