"""A served tournament to measure around: ``chinchon serve`` (with ``--http`` or not) in a
process of its own, its tournament of six bots, and the honest fast bots playing it (two
processes of ``bench_spectator.py bots``), their decisions counted in buckets of time
(bench_spectator.py, bench_metrics.py and bench_organizer.py measure around it)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .measure import pct

#: The honest bots' program: ``bench_spectator.py bots`` (run, not imported).
HONEST = Path(__file__).resolve().parents[1] / "bench_spectator.py"

ADMIN = "bench-spectator-admin-token"
BOTS = [f"bot{i}" for i in range(6)]
#: Seconds of a bucket of the bots' decision counts.
BUCKET = 0.1


def token(bot: str) -> str:
    return f"tok-{bot}-bench-spectator"


def honest_bots(target: str, folder: Path, drop_every: float = 0.0) -> list[subprocess.Popen[bytes]]:
    """The honest bots on ``target``: two processes of three bots each, the second one
    dropping its connection every ``drop_every`` seconds (0: never); their counts go
    to ``folder``/bots<i>.json when they stop."""
    return [subprocess.Popen(
        [sys.executable, str(HONEST), "bots", "--target", target,
         "--bots", ",".join(group), "--out", str(folder / f"bots{i}.json"),
         "--drop-every", str(drop_every if i == 1 else 0.0)],
        stderr=open(folder / f"bots{i}.err", "wb"))
        for i, group in enumerate((BOTS[:3], BOTS[3:]))]


def stop_served(proc: subprocess.Popen[str], err: Any, bots: list[subprocess.Popen[bytes]],
                folder: Path, wait: float) -> list[dict[str, Any]]:
    """Stop the honest ``bots`` (their counts, read from ``folder``), then the server
    ``proc`` (killed if it has not ended in ``wait`` seconds), and close its ``err``."""
    for b in bots:
        b.send_signal(signal.SIGTERM)
    for b in bots:
        b.wait(60)
    got = [json.loads((folder / f"bots{i}.json").read_text()) for i in range(len(bots))]
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    err.close()
    return got


class Run:
    """``chinchon serve`` (with ``--http`` or not), its tournament, its honest bots."""

    def __init__(self, tmp: Path, name: str, http: bool, nofile: int | None = None,
                 drop_every: float = 0.0, extra: tuple[str, ...] = ()) -> None:
        self.tmp = tmp / name
        self.tmp.mkdir()
        bots_file = self.tmp / "bots.toml"
        bots_file.write_text("[bots]\n" + "".join(f'{b} = "{token(b)}"\n' for b in BOTS))
        (self.tmp / "admin.token").write_text(ADMIN)
        os.chmod(self.tmp / "admin.token", 0o600)
        args = [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
                "--db", str(self.tmp / "db.sqlite3"), "--bots-file", str(bots_file),
                "--admin-token-file", str(self.tmp / "admin.token"), "--log-level", "warning"]
        if http:
            args += ["--http", "127.0.0.1:0", "--trusted-proxy", "127.0.0.1"]
        args += extra

        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.err = open(self.tmp / "serve.err", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     preexec_fn=limit if nofile else None,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.url = ""
        self.web_pid = 0
        self.metrics_url, self.metrics_pid = "", 0
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"serve ended: {(self.tmp / 'serve.err').read_text()[-2000:]}")
            ev = json.loads(line) if line.startswith("{") else {}
            if ev.get("event") == "web":
                self.url, self.web_pid = ev["url"], int(ev["pid"])
            if ev.get("event") == "metrics":
                self.metrics_url, self.metrics_pid = ev["url"], int(ev["pid"])
            if ev.get("event") == "listening":
                self.port, self.pid = int(ev["port"]), int(ev["pid"])
                break
        self.tid = self._create()
        self.bots = honest_bots(f"127.0.0.1:{self.port}", self.tmp, drop_every)

    def _create(self) -> str:
        import grpc
        from chinchon.v1 import tournament_pb2 as tpb
        from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

        spec = tpb.TournamentSpec(
            name="bench spectator", participants=[tpb.Participant(name=b, token=token(b)) for b in BOTS],
            table_size=2, games_per_pairing=2000, concurrency=4, start_when_connected=True,
            seed="bench-spectator")
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            made = tpb_grpc.TournamentServiceStub(ch).CreateTournament(
                tpb.CreateTournamentRequest(spec=spec), metadata=(("authorization", f"Bearer {ADMIN}"),),
                # The organizer's worker (niced) starts beside the referee: on a busy
                # machine its first answer takes a while.
                timeout=120)
        return str(made.tournament.id)

    def wait_playing(self, games: int = 1, timeout: float = 120.0) -> None:
        """Until ``games`` games are finished: the bots connected and play."""
        deadline = time.monotonic() + timeout
        while self.finished_games() < games:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no game was played in {timeout:g} s: "
                                   f"{(self.tmp / 'serve.err').read_text()[-2000:]}")
            time.sleep(0.2)

    def finished_games(self) -> int:
        import sqlite3

        con = sqlite3.connect(f"file:{self.tmp / 'db.sqlite3'}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT count(*) FROM games WHERE status = 'finished'").fetchone()[0])
        finally:
            con.close()

    def terminations(self) -> Counter[str]:
        import sqlite3
        import zlib

        con = sqlite3.connect(f"file:{self.tmp / 'db.sqlite3'}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT record_z, record FROM games WHERE status = 'finished'").fetchall()
        finally:
            con.close()
        out: Counter[str] = Counter()
        for z, text in rows:
            rec = json.loads(zlib.decompress(z) if z else text)
            out[rec["result"].get("termination", "")] += 1
        return out

    def stop(self) -> list[dict[str, Any]]:
        """Stop the bots (their counts) and the server."""
        return stop_served(self.proc, self.err, self.bots, self.tmp, 30)


def measured(bots: list[dict[str, Any]], a: float, b: float) -> dict[str, float]:
    """Decisions/s and the draw -> discard p50/p99 (ms) between monotonic times a and b."""
    n = sum(v for got in bots for k, v in got["buckets"].items() if a <= int(k) * BUCKET < b)
    lat = [d for got in bots for t, d in got["samples"] if a <= t < b]
    return {"decisions_per_s": n / (b - a), "p50_ms": pct(lat, 50) * 1000,
            "p99_ms": pct(lat, 99) * 1000, "samples": len(lat)}

