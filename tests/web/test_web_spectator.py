"""A spectator cannot hurt a game (docs/security.md#a-spectator): against a
real ``chinchon serve --http`` with real bot processes, a hostile spectator
(bench/spectator_attack.py, a process of its own, at the lowest priority: it stands
for another machine) asks for replays at full speed, holds idle and slowloris
connections past the open-file limit, and asks for ids that do not exist. The games
go on untouched: no timeout, bots connect and come back, admin calls answer, and the
web view's memory does not grow."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import duration

from tests.support.helpers import ADMIN, ROOT
from tests.support.serve import admin_spec, db_games, free_port, launch_sdk_bots
from tests.support.waits import until_sync
from tests.support.web import ServeWeb

ATTACK = str(ROOT / "bench" / "spectator_attack.py")
AUTH = (("authorization", f"Bearer {ADMIN}"),)


def create(port: int, name: str, bots: list[str], games: int, *, score_limit: int = 60,
           per_move: float = 1.0, bank: float = 5.0, concurrency: int = 1) -> str:
    """A round-robin of ``bots`` made through the admin API (an admin call)."""
    spec = admin_spec(name, bots, score_limit=score_limit, reconnect_grace=10.0,
                      games_per_pairing=games, concurrency=concurrency, seed=f"seed-{name}")
    spec.time_control.CopyFrom(g.TimeControl(per_move=duration(per_move), bank=duration(bank)))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        made = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec), metadata=AUTH, timeout=10)
    return str(made.tournament.id)


def finished(port: int, tid: str) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        ts = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=AUTH, timeout=10).tournaments
    return any(t.id == tid and t.status == tpb.TOURNAMENT_STATUS_FINISHED for t in ts)


def rss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


class Procs:
    """Processes started by a test: bots and attackers, killed at its end."""

    def __init__(self) -> None:
        self.all: list[subprocess.Popen[Any]] = []

    def attack(self, *args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen([sys.executable, ATTACK, *args, "--nice", "19"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.all.append(p)
        return p

    def add(self, ps: list[subprocess.Popen[bytes]]) -> list[subprocess.Popen[bytes]]:
        self.all += ps
        return ps


@pytest.fixture
def procs() -> Iterator[Procs]:
    p = Procs()
    try:
        yield p
    finally:
        for proc in p.all:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """``serve(extra=..., nofile=...)``: a ``chinchon serve --http`` of the test."""
    started: list[ServeWeb] = []

    def start(extra: tuple[str, ...] = (), nofile: int | None = None,
              log_level: str = "warning") -> ServeWeb:
        s = ServeWeb(tmp_path, free_port(), free_port(), tmp_path / f"w{len(started)}.sqlite3",
                     len(started), extra=extra, nofile=nofile, log_level=log_level)
        started.append(s)
        return s

    try:
        yield start
    finally:
        for s in started:
            s.stop()


def ended_by_itself(p: subprocess.Popen[str], timeout: float = 120) -> dict[str, Any]:
    """What an attacker counted, once its time is up."""
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    counts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return counts


def ended(p: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
    """Stop an attacker (SIGTERM) and read what it counted (one started with
    ``--until-ok N`` ends once N answers were 200)."""
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    counts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return counts


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.timeout(1500)
def test_replays_and_pages_at_full_speed_cost_the_referee_nothing(
    tmp_path: Path, serve: Any, procs: Procs,
) -> None:
    """A replay is a second of CPU or so; eight at once from one
    spectator, and the games list and standings at full speed besides. The pages are
    built by the web view's own process, at a lower priority: the referee spends no CPU
    on them, and not one decision of a 0.25 s + 1 s clock runs out meanwhile."""
    web = serve()
    port = web.port
    assert web.web_pid != web.pid
    assert os.getpriority(os.PRIO_PROCESS, web.web_pid) >= os.getpriority(os.PRIO_PROCESS, web.pid) + 10
    long = create(port, "long", ["la", "lb"], 2, score_limit=400)
    bots = procs.add(launch_sdk_bots(tmp_path, port, {"la": "greedy", "lb": "greedy"}))
    until_sync(lambda: finished(port, long), "the long games were played", 120)
    for p in bots:
        p.kill()
    # No game now: whatever the referee's process spends, it spends on the pages.
    cpu0 = cpu_seconds(web.pid)
    # 15 s at full speed, and on a machine too busy for that (the attackers are niced),
    # until they were answered enough for the measure to mean something.
    replays = procs.attack("replays", web.url, "--tid", long, "--seconds", "15", "--in-flight", "8",
                           "--until-ok", "10")
    pages = procs.attack("pages", web.url, "--tid", long, "--seconds", "15", "--in-flight", "8",
                         "--until-ok", "100")
    counts = [ended_by_itself(replays, 700), ended_by_itself(pages, 700)]
    spent = cpu_seconds(web.pid) - cpu0
    assert counts[0]["status"].get("200", 0) >= 10 and counts[1]["status"].get("200", 0) >= 100, counts
    assert spent < 1.0, f"the referee's process spent {spent:.2f} s of CPU on {counts}"
    # Games with a tight clock, under the same attack for as long as they last.
    tight = create(port, "tight", ["ta", "tb"], 4, per_move=0.25, bank=1.0, concurrency=2)
    # Each goes on after the games until one of its requests was answered: a replay in
    # flight can outlast the games (CI: four tight games over before the first of eight
    # replays in flight was served), and one answered shows they were real replays.
    attackers = [procs.attack(kind, web.url, "--tid", long, "--seconds", "600", "--in-flight", "8",
                              "--until-ok", "1")
                 for kind in ("replays", "pages")]
    procs.add(launch_sdk_bots(tmp_path, port, {"ta": "greedy", "tb": "greedy"}))
    until_sync(lambda: finished(port, tight), "the tight games were played", 240)
    counts = [ended(a, 660) for a in attackers]
    assert counts[0]["status"].get("200", 0) >= 1, counts  # the replays were being served
    games = db_games(web.db, tight)
    assert len(games) >= 4
    for gid, row in games.items():
        assert row["status"] == "finished", gid
        result = json.loads(row["record"])["result"]
        assert "FORFEIT" not in json.dumps(result), (gid, result)
        assert all(s["timeouts"] == 0 for s in json.loads(row["stats"])), (gid, row["stats"])


def _raise_own_nofile(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        assert hard >= need, f"this test opens {need} connections: the hard open-file limit is {hard}"
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def test_idle_and_slowloris_connections_leave_the_referee_its_file_descriptors(
    tmp_path: Path, serve: Any, procs: Procs,
) -> None:
    """At a 1,024 open-file limit, 1,100 idle web connections and 100
    slowloris ones: a new bot connects, a bot that drops comes back, admin calls answer,
    a visitor is served, and the slowloris connections are closed."""
    _raise_own_nofile(3000)
    web = serve(nofile=1024)
    port = web.port
    held: list[socket.socket] = []
    for _ in range(1100):
        held.append(socket.create_connection(("127.0.0.1", web.http_port), timeout=10))
    slow: list[socket.socket] = []
    for i in range(100):
        s = socket.create_connection(("127.0.0.1", web.http_port), timeout=10)
        s.sendall(f"GET /api/home HTTP/1.1\r\nHost: 127.0.0.1\r\nX-{i}: a".encode())
        slow.append(s)
    try:
        tid = create(port, "fds", ["fa", "fb"], 2)  # an admin call
        bots = procs.add(launch_sdk_bots(tmp_path, port, {"fa": "greedy", "fb": "greedy"}))
        db = web.db
        until_sync(lambda: any(r["status"] == "finished" for r in db_games(db, tid).values()),
                   "a first game was played by bots that connected now", 90)
        # A bot whose connection dropped comes back (a new connection) and plays on.
        bots[0].kill()
        bots[0].wait()
        procs.add(launch_sdk_bots(tmp_path, port, {"fa": "greedy"}, tag="again"))
        until_sync(lambda: finished(port, tid), "the tournament was played to its end", 120)
        for row in db_games(db, tid).values():
            result = json.loads(row["record"])["result"]
            assert "FORFEIT" not in json.dumps(result), result
        # A visitor is served (the connection idle the longest made room for it).
        with urllib.request.urlopen(web.url + "api/home", timeout=30) as r:
            assert r.status == 200
        # The slowloris connections were closed by the server (its header timeout).
        def all_closed() -> bool:
            return all(_ended(s) for s in slow)
        until_sync(all_closed, "the slowloris connections were closed", 60,
                   detail=lambda: sum(not _ended(s) for s in slow))
    finally:
        for s in held + slow:
            s.close()


def _ended(s: socket.socket) -> bool:
    """The server ended the connection (FIN or RST), seen without consuming the data."""
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    return info[0] in (7, 8)  # TCP_CLOSE, TCP_CLOSE_WAIT


@pytest.mark.timeout(1500)
def test_requests_for_unknown_ids_cost_the_web_view_no_memory(serve: Any, procs: Procs) -> None:
    """20,000 requests for tournaments and games that do not exist,
    each from another viewer (behind a trusted proxy, so that no rate bound holds them
    back), after 10,000 to warm up: the web view's memory grows by less than 4 MB (on the
    referee's loop it grew ~0.4 kB a request of this mix, never freed: 8 MB here). The
    attacker runs at nice 19: on a busy machine it takes its time, the test waits."""
    web = serve(("--trusted-proxy", "127.0.0.1"))
    warm = procs.attack("unknown", web.url, "--requests", "10000", "--spread", "--seconds", "600")
    warm.wait(660)
    before = rss_kib(web.web_pid)
    attack = procs.attack("unknown", web.url, "--requests", "20000", "--spread", "--seconds", "600",
                          "--seed", "more")
    out, err = attack.communicate(timeout=660)
    assert attack.returncode == 0, err[-3000:]
    counts = json.loads(out.strip().splitlines()[-1])
    answered = sum(v for k, v in counts["status"].items() if k.isdigit())
    assert answered >= 20000 and set(counts["status"]) <= {"404", "429", "closed"}, counts
    assert counts["status"].get("404", 0) >= 19000, counts  # each was looked up
    grown = rss_kib(web.web_pid) - before
    assert grown < 4 * 1024, f"the web view's memory grew by {grown} KiB"
