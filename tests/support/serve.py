"""`chinchon serve` as a child process, SDK bots as child processes, and the database
reads of the kill/resume tests, SQLite or PostgreSQL (no tests here)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import duration

from tests.support.helpers import ADMIN, ROOT, bot_token, sdk_bot
from tests.support.tournament import CLI
from tests.support.waits import until_sync


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``chinchon serve`` as a child process; stdout and stderr go to files."""

    def __init__(self, tmp: Path, port: int, db: Path | str, n: int,
                 extra: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.out = tmp / f"serve{n}.out"
        self.err = tmp / f"serve{n}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(db),
                 "--admin-token", ADMIN, "--log-level", "warning", *(extra or [])],
                stdout=out, stderr=err, env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})),
            )
        until_sync(self._listening, "chinchon serve did not start", 120)
        assert self._listening()[0]["port"] == port

    def _listening(self) -> list[dict[str, Any]]:
        """The 'listening' events printed so far (the process must still be running)."""
        lines = self.out.read_text(encoding="utf-8").splitlines()
        events = [json.loads(x) for x in lines if x.startswith("{")]
        assert self.proc.poll() is None, self.err.read_text(encoding="utf-8")[-3000:]
        return [e for e in events if e.get("event") == "listening"]

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(10) == -signal.SIGKILL

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def db_games(db: Path | str, tid: str) -> dict[str, dict[str, Any]]:
    """The games of ``tid`` as the database holds them, read with the database's own
    driver (sqlite3, or psycopg for a postgresql:// URL); each record as its JSON text
    (stored compressed: zlib); ``owner``: the process that played it (shared mode)."""
    sql = ("SELECT id, seq, players, deal_id, status, voided, record_z, stats, owner, record "
           "FROM games WHERE tournament_id = ? ORDER BY seq")
    if str(db).startswith("postgresql://"):
        import psycopg
        with psycopg.connect(str(db)) as pg:
            rows = pg.execute(sql.replace("?", "%s"), (tid,)).fetchall()  # type: ignore[call-overload]
    else:
        con = sqlite3.connect(db)
        try:
            rows = con.execute(sql, (tid,)).fetchall()
        finally:
            con.close()
    return {r[0]: {"seq": r[1], "players": json.loads(r[2]), "deal_id": r[3], "status": r[4],
                   "voided": r[5], "stats": r[7], "owner": r[8],
                   "record": zlib.decompress(r[6]).decode() if r[6] is not None else r[9]}
            for r in rows}


def tournament_status(db: Path | str, tid: str) -> str:
    """The status of tournament ``tid`` as the database holds it."""
    sql = "SELECT status FROM tournaments WHERE id = ?"
    if str(db).startswith("postgresql://"):
        import psycopg
        with psycopg.connect(str(db)) as pg:
            (status,), = pg.execute(sql.replace("?", "%s"), (tid,)).fetchall()  # type: ignore[call-overload]
        return str(status)
    con = sqlite3.connect(db)
    try:
        (status,) = con.execute(sql, (tid,)).fetchone()
    finally:
        con.close()
    return str(status)


def launch_sdk_bots(tmp_path: Path, port: int, bots: dict[str, str],
                    streams: int = 1, tag: str = "") -> list[subprocess.Popen[bytes]]:
    """``streams`` SDK bot processes per bot (name -> engine bot) against the referee on
    ``port``, each logging to ``tmp_path/NAME.TAG.I.log``."""
    procs = []
    for b, kind in bots.items():
        for i in range(streams):
            with open(tmp_path / f"{b}.{tag}{i}.log", "wb") as err:
                procs.append(subprocess.Popen(
                    [*sdk_bot(kind), "--target", f"127.0.0.1:{port}", "--token", bot_token(b)],
                    stdout=subprocess.DEVNULL, stderr=err,
                    env=dict(os.environ, PYTHONUNBUFFERED="1"),
                ))
    return procs


def wait_mid_tournament(db: Path | str, tid: str) -> None:
    """Wait until at least two games of ``tid`` are done and another is in flight."""
    def status() -> Counter[str]:
        return Counter(x["status"] for x in db_games(db, tid).values())

    def mid() -> bool:
        now = status()  # one snapshot
        return now["finished"] >= 2 and now["running"] >= 1

    until_sync(mid, "no progress", 60, detail=status)


def admin_spec(name: str, bots: list[str], *, score_limit: int, reconnect_grace: float,
               games_per_pairing: int, concurrency: int, seed: str) -> tpb.TournamentSpec:
    """A 2-player round-robin for CreateTournament: tokens bot_token(NAME), a 1 s + 5 s clock,
    started when every bot is connected."""
    return tpb.TournamentSpec(
        name=name,
        participants=[tpb.Participant(name=b, token=bot_token(b)) for b in bots],
        rules=g.RuleSet(score_limit=score_limit),
        time_control=g.TimeControl(per_move=duration(1.0), bank=duration(5.0)),
        policies=g.Policies(reconnect_grace=duration(reconnect_grace)),
        table_size=2, games_per_pairing=games_per_pairing, start_when_connected=True,
        concurrency=concurrency, seed=seed,
    )


def watch(stub: tpb_grpc.TournamentServiceStub, tid: str,
          events: list[tpb.WatchTournamentResponse]) -> threading.Thread:
    """A thread that appends the events of ``tid`` to ``events`` until its watch ends
    (the tournament is over); returned once the first event came."""
    def run() -> None:
        for ev in stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                       metadata=((("authorization", f"Bearer {ADMIN}"),)),
                                       timeout=300):
            events.append(ev)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    until_sync(lambda: events, "the watch did not begin", 60)
    return t


def stop_all(bot_procs: list[subprocess.Popen[bytes]], servers: list[Serve]) -> None:
    """Kill the bot processes and stop the servers (SIGTERM)."""
    for p in bot_procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    for s in servers:
        s.stop()


ALICE = "tok-alice-serve-test"


@contextmanager
def serve(tmp_path: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
         "--db", str(tmp_path / "ref.sqlite3"), "--admin-token", ADMIN_TOKEN,
         "--bot", f"alice={ALICE}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        event = json.loads(line)
        assert event["event"] == "listening", line
        # uvloop is a dependency wherever it runs (not Windows): the server uses it.
        assert event["loop"] == ("asyncio" if sys.platform == "win32" else "uvloop"), line
        yield proc, int(event["port"])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def sdk(target: str, token: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chinchon.sdk", "--target", target, "--token", token,
         "--bot", "greedy", "--practice", "random", "--games", "1", *extra],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )


ADMIN_TOKEN = "admin-token-serve-test"


def organizer_pid(server: Serve) -> int | None:
    """The pid of ``server``'s organizer worker process now (None while it has none)."""
    pid = server.proc.pid
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    for k in kids:
        try:
            if b"organizer_process" in Path(f"/proc/{k}/cmdline").read_bytes():
                return int(k)
        except OSError:
            continue
    return None
