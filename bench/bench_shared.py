"""Several referee processes on one PostgreSQL database: the same round-robin
played by 1, 2 and 4 ``chinchon serve --shared`` processes, and by one ``chinchon serve``
on SQLite, interleaved.

Each run: a fresh database (a new PostgreSQL database, or a SQLite file), N ``chinchon
serve`` child processes (``--shared`` on PostgreSQL; uvloop and their own GC settings,
as deployed), a tournament created through the admin API of process 0 (6 bots, 2-player
tables, ``--games-per-pairing`` games per pairing, default rules and clock, started by
hand), and, beside each referee process, one process of fast raw bots
(``bench_server.fast_bots``: first legal action, no SDK) holding every bot's streams on
that process: a game is played by the process that holds an idle stream of each of its
seats. The tournament's ``concurrency`` is per process; ``--concurrency`` is the total
(games at once over all processes), split evenly, so every run has the same games in
flight (``--per-process N`` instead: N on each). Once every stream is idle on every
process, an idle window (``--idle`` seconds: what heartbeats and leases cost with
nothing to play), then StartTournament; the run ends with the FINISHED event of a
WatchTournament stream on the last process.

Measured from /proc (utime + stime): every referee process (read before it is stopped),
the bots (``wait4``), and the private PostgreSQL cluster (its postmaster and its live
children exactly, from schedstat, plus the backends it reaped, in clock ticks); from
PostgreSQL: the transactions committed in the database and the WAL written. Decisions
are the bots' answers.

    python bench/bench_shared.py                                # own PostgreSQL, 2 rounds
    python bench/bench_shared.py --games-per-pairing 20 --rounds 3 --json out.json
    python bench/bench_shared.py --per-process 4 --no-sqlite      # 4 games at once on each
    python bench/bench_shared.py --count-statements --rounds 1    # statements and claims per game
    python bench/bench_shared.py --postgres "postgresql://me@/postgres?host=/tmp/pg&port=5432"

Needs the dev extras (it reuses tests/support/postgres.py and tests/support/serve.py)
and PostgreSQL's server binaries (initdb) unless given ``--postgres``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))
from harness.measure import CLK_TCK, cpu_seconds  # noqa: E402

from tests.support.helpers import ADMIN  # noqa: E402
from tests.support.serve import Serve, db_games, free_port  # noqa: E402

AUTH = (("authorization", f"Bearer {ADMIN}"),)


# --- CPU of the PostgreSQL server -------------------------------------------------------


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def postmaster_pid(url: str) -> int | None:
    """The PostgreSQL server's main process, if it runs on this machine (the parent of
    this connection's backend); None if it cannot be seen."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # the backend lives while it is open
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        try:
            ppid = int(_stat(int(row[0]))[1]) if row else 0
            with open(f"/proc/{ppid}/comm") as f:
                return ppid if "postgres" in f.read() else None
        except OSError:
            return None


def _run_ns(pid: int) -> int:
    """The nanoseconds a (single-threaded) process has run: exact, where utime and stime
    are counted in clock ticks and a light backend's work can fall between two ticks."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def postgres_cpu(postmaster: int) -> float:
    """CPU-seconds of the server: the postmaster and its live children, exactly (schedstat),
    and the children it reaped (backends of connections since closed), in clock ticks."""
    reaped = sum(int(x) for x in _stat(postmaster)[13:15])
    total_ns = _run_ns(postmaster)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if int(_stat(int(d))[1]) == postmaster:
                total_ns += _run_ns(int(d))
        except (OSError, ValueError, IndexError):
            continue
    return reaped / CLK_TCK + total_ns / 1e9


def pg_counters(url: str) -> tuple[int, int]:
    """This database's committed transactions, and the WAL position (bytes)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint "
            "FROM pg_stat_database WHERE datname = current_database()").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


class StatementLog:
    """PostgreSQL's log of every statement (``log_statement = all``, set on a private
    cluster by ``--count-statements``): the statements run between two marks."""

    CLAIM = "UPDATE games SET status = 'running', started"

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return self.path.stat().st_size

    def count(self, start: int, end: int) -> tuple[int, int]:
        """(statements, claims of a game) logged between the marks ``start`` and ``end``."""
        with open(self.path, "rb") as f:
            f.seek(start)
            text = f.read(end - start).decode(errors="replace")
        statements = claims = 0
        for line in text.splitlines():
            if "LOG:  statement: " in line or "LOG:  execute " in line:
                if "LOG:  statement: BEGIN" in line or "LOG:  statement: COMMIT" in line:
                    continue
                statements += 1
                claims += self.CLAIM in line
        return statements, claims


def log_statements(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET log_statement = 'all'")
        conn.execute("SELECT pg_reload_conf()")


# --- the bots ---------------------------------------------------------------------------


def bot_main(argv: list[str]) -> int:
    """One process of fast raw bots on one referee process: ``--streams`` streams of each
    ``--token``; prints the counters as JSON when the referee has closed every stream."""
    from chinchon_referee.host.fdlimit import raise_nofile
    from harness.fastbots import fast_bots

    ap = argparse.ArgumentParser(prog="bench_shared.py bot")
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", action="append", required=True)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=3600)
    a = ap.parse_args(argv)
    raise_nofile()
    res = asyncio.run(fast_bots(a.target, [(t, a.streams) for t in a.token], 50,
                                a.max_seconds))
    print(json.dumps({"counts": res["counts"]}), flush=True)
    return 0


# --- one run ----------------------------------------------------------------------------


class Run:
    """N referee processes on one database, with their bots."""

    def __init__(self, tmp: Path, db: str, n: int, shared: bool, lease: float | None) -> None:
        extra = ["--shared"] if shared else []
        if shared and lease is not None:
            extra += ["--lease", str(lease)]
        self.tmp, self.db, self.n = tmp, db, n
        self.servers: list[Serve] = []
        self.bots: list[subprocess.Popen[bytes]] = []
        try:
            for i in range(n):
                self.servers.append(Serve(tmp, free_port(), db, i, extra))
        except BaseException:
            self.close()  # those already started
            raise
        self.ports = [s._listening()[0]["port"] for s in self.servers]
        self.names = [s._listening()[0].get("process", "") for s in self.servers]

    def stub(self, i: int) -> tuple[Any, Any]:
        import grpc
        from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

        ch = grpc.insecure_channel(f"127.0.0.1:{self.ports[i]}")
        return ch, tpb_grpc.TournamentServiceStub(ch)

    def launch_bots(self, tokens: list[str], streams: int, max_seconds: float) -> None:
        for i, port in enumerate(self.ports):
            cmd = [sys.executable, str(Path(__file__).resolve()), "bot", "--target",
                   f"127.0.0.1:{port}", "--streams", str(streams),
                   "--max-seconds", str(max_seconds)]
            for t in tokens:
                cmd += ["--token", t]
            with open(self.tmp / f"bots{i}.out", "wb") as out, \
                    open(self.tmp / f"bots{i}.err", "wb") as err:
                self.bots.append(subprocess.Popen(cmd, stdout=out, stderr=err))

    def wait_connected(self, bots: list[str], streams: int, timeout: float) -> None:
        from chinchon.v1 import tournament_pb2 as tpb

        want = streams * self.n
        deadline = time.monotonic() + timeout
        last: Any = None
        for i in range(self.n):
            ch, stub = self.stub(i)
            with ch:
                while True:
                    got = {b.name: b for b in stub.ListConnectedBots(
                        tpb.ListConnectedBotsRequest(), metadata=AUTH, timeout=30).bots}
                    last = {k: (v.idle, v.processes) for k, v in got.items()}
                    if all(b in got and got[b].idle >= want and got[b].processes == self.n
                           for b in bots):
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the bots did not connect: process {i} sees {last}; "
                                           f"bots' exit codes {[p.poll() for p in self.bots]}")
                    time.sleep(0.1)

    def referee_cpu(self) -> list[float]:
        return [cpu_seconds(s.proc.pid) for s in self.servers]

    def close(self) -> None:
        for p in self.bots:
            if p.poll() is None:
                p.kill()
                p.wait()
        for s in self.servers:
            s.stop()


def bots_cpu_and_counts(run: Run, timeout: float) -> tuple[float, Counter[str]]:
    """Wait for the bot processes (dismissed at the tournament's end, they exit); their
    CPU-seconds (wait4: exact, for the whole process) and summed counters."""
    cpu = 0.0
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + timeout
    for i, p in enumerate(run.bots):
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.send_signal(signal.SIGKILL)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu += ru.ru_utime + ru.ru_stime
        for line in (run.tmp / f"bots{i}.out").read_text().splitlines():
            if line.startswith("{"):
                counts.update(json.loads(line)["counts"])
    return cpu, counts


def watch_until_finished(stub: Any, tid: str, timeout: float) -> tuple[threading.Thread,
                                                                        list[Any], list[float]]:
    """A WatchTournament stream in a thread: its events, and the time the FINISHED one came."""
    from chinchon.v1 import tournament_pb2 as tpb

    events: list[Any] = []
    finished: list[float] = []

    def run() -> None:
        for ev in stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                       metadata=AUTH, timeout=timeout):
            events.append(ev)
            if ev.tournament.status == tpb.TOURNAMENT_STATUS_FINISHED:
                finished.append(time.perf_counter())
                return

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while not events:
        if time.monotonic() > deadline or not t.is_alive():
            raise RuntimeError("the watch did not begin")
        time.sleep(0.02)
    return t, events, finished


def run_one(store: str, n: int, base: str | None, args: argparse.Namespace,
            postmaster: int | None, statements: StatementLog | None = None) -> dict[str, Any]:
    """One tournament on ``store`` ("sqlite" or "postgres") played by ``n`` processes."""
    from chinchon.v1 import tournament_pb2 as tpb

    per = args.per_process or max(1, args.concurrency // n)
    names = [f"bot{i}" for i in range(args.bots)]
    tokens = {b: f"bench-{b}-{secrets.token_hex(12)}" for b in names}
    with tempfile.TemporaryDirectory(prefix="bench-shared-") as tmpname:
        tmp = Path(tmpname)
        if store == "postgres":
            from tests.support.postgres import create_database

            assert base is not None
            db = create_database(base)
        else:
            db = str(tmp / "tournament.sqlite3")
        run = Run(tmp, db, n, store == "postgres", args.lease)
        try:
            ch, stub = run.stub(0)
            with ch:
                spec = tpb.TournamentSpec(
                    name=f"bench {store} x{n}",
                    participants=[tpb.Participant(name=b, token=tokens[b]) for b in names],
                    table_size=2, games_per_pairing=args.games_per_pairing,
                    concurrency=per, seed="bench-seed", start=tpb.TOURNAMENT_START_MANUAL)
                made = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                             metadata=AUTH, timeout=60)
                tid = made.tournament.id
                total = made.tournament.games_total
            run.launch_bots(list(tokens.values()), per, args.timeout + 300)
            run.wait_connected(names, per, 120)
            # Idle: every stream connected, nothing to play.
            pg = postmaster if store == "postgres" else None
            i_ref, i_pg, i0 = sum(run.referee_cpu()), postgres_cpu(pg) if pg else 0.0, \
                time.perf_counter()
            time.sleep(args.idle)
            idle_s = time.perf_counter() - i0
            idle_ref = (sum(run.referee_cpu()) - i_ref) / idle_s / n
            idle_pg = (postgres_cpu(pg) - i_pg) / idle_s if pg else None
            wch, wstub = run.stub(n - 1)
            with wch:
                watcher, events, finished = watch_until_finished(wstub, tid, args.timeout)
                xact0 = pg_counters(db) if store == "postgres" else (0, 0)
                bots0 = sum(cpu_seconds(p.pid) for p in run.bots)
                ref0 = run.referee_cpu()
                pg0 = postgres_cpu(pg) if pg else 0.0
                log0 = statements.mark() if statements and pg else 0
                t0 = time.perf_counter()
                ch, stub = run.stub(0)
                with ch:
                    stub.StartTournament(tpb.StartTournamentRequest(tournament_id=tid),
                                         metadata=AUTH, timeout=60)
                watcher.join(args.timeout)
                if not finished:
                    raise RuntimeError(f"the tournament did not finish in {args.timeout} s "
                                       f"({len(events)} events)")
                wall = finished[0] - t0
                ref1 = run.referee_cpu()  # before they stop
                pg1 = postgres_cpu(pg) if pg else 0.0
                logged = (statements.count(log0, statements.mark()) if statements and pg
                          else None)
            bots_cpu, counts = bots_cpu_and_counts(run, 60)
            bots_cpu -= bots0
        finally:
            run.close()
        xact1 = pg_counters(db) if store == "postgres" else (0, 0)  # stats flushed at exit
        games = db_games(db, tid)
    status = Counter(str(g["status"]) for g in games.values())
    finished_games = status["finished"]
    owners = Counter(str(g["owner"]) for g in games.values() if g["status"] == "finished")
    decisions = counts["requests"]
    ref = [b - a for a, b in zip(ref0, ref1, strict=True)]
    ref_total = sum(ref)
    g_ = max(finished_games, 1)
    d_ = max(decisions, 1)
    return {
        "store": store, "processes": n, "per_process_concurrency": per, "tournament": tid,
        "scheduled": total, "games": finished_games, "statuses": dict(status),
        "voided": sum(1 for g in games.values() if g["voided"]),
        "games_by_process": sorted(owners.values(), reverse=True),
        "wall": wall, "games_per_s": finished_games / wall, "decisions": decisions,
        "decisions_per_s": decisions / wall,
        "referee_cpu_s": ref_total, "referee_cpu_by_process": ref,
        "referee_cpu_ms_per_game": ref_total * 1000 / g_,
        "referee_us_per_decision": ref_total * 1e6 / d_,
        "bots_us_per_decision": bots_cpu * 1e6 / d_,
        "postgres_cpu_ms_per_game": (pg1 - pg0) * 1000 / g_ if pg else None,
        "postgres_us_per_decision": (pg1 - pg0) * 1e6 / d_ if pg else None,
        "xacts_per_game": (xact1[0] - xact0[0]) / g_ if store == "postgres" else None,
        "wal_kb_per_game": (xact1[1] - xact0[1]) / 1000 / g_ if store == "postgres" else None,
        "statements_per_game": logged[0] / g_ if logged else None,
        "claims_per_game": logged[1] / g_ if logged else None,
        "idle_s": idle_s, "idle_referee_ms_per_s_per_process": idle_ref * 1000,
        "idle_postgres_ms_per_s": idle_pg * 1000 if idle_pg is not None else None,
        "load": os.getloadavg()[0],
    }


# --- the report -------------------------------------------------------------------------


def label(r: dict[str, Any]) -> str:
    return f"{'SQLite' if r['store'] == 'sqlite' else 'PostgreSQL'} x{r['processes']}"


def _f(x: Any, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def markdown(rows: list[dict[str, Any]]) -> str:
    out = ["| round | store x processes | at once | games | wall | games/s | referee CPU per game | "
           "referee CPU per decision | bots CPU per decision | PostgreSQL CPU per game | "
           "transactions per game | WAL per game | idle: referee per process, PostgreSQL | "
           "games by process |",
           "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: | --- |"]
    for r in rows:
        out.append(
            f"| {r['round']} | {label(r)} | {r['processes']} x {r['per_process_concurrency']} | "
            f"{r['games']}/{r['scheduled']} | {r['wall']:.1f} s | "
            f"{r['games_per_s']:.2f} | {r['referee_cpu_ms_per_game']:.0f} ms | "
            f"{r['referee_us_per_decision']:.0f} µs | {r['bots_us_per_decision']:.0f} µs | "
            f"{_f(r['postgres_cpu_ms_per_game'], '.1f')} ms | {_f(r['xacts_per_game'], '.1f')} | "
            f"{_f(r['wal_kb_per_game'], '.1f')} kB | "
            f"{r['idle_referee_ms_per_s_per_process']:.1f}, "
            f"{_f(r['idle_postgres_ms_per_s'], '.1f')} ms/s | "
            f"{' / '.join(map(str, r['games_by_process']))} |")
    return "\n".join(out)


MEDIANS = ("games_per_s", "referee_cpu_ms_per_game", "referee_us_per_decision",
           "bots_us_per_decision", "postgres_cpu_ms_per_game", "xacts_per_game",
           "wal_kb_per_game", "idle_referee_ms_per_s_per_process", "idle_postgres_ms_per_s")


def medians(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys: list[tuple[str, int]] = []
    for r in rows:
        if (r["store"], r["processes"]) not in keys:
            keys.append((r["store"], r["processes"]))
    out = []
    for store, n in keys:
        mine = [r for r in rows if r["store"] == store and r["processes"] == n]
        m: dict[str, Any] = {"store": store, "processes": n, "runs": len(mine)}
        for k in MEDIANS:
            vals = [r[k] for r in mine if r[k] is not None]
            m[k] = statistics.median(vals) if vals else None
        out.append(m)
    return out


def markdown_medians(meds: list[dict[str, Any]]) -> str:
    out = ["| store x processes | runs | games/s | referee CPU per game | referee CPU per decision "
           "| bots CPU per decision | PostgreSQL CPU per game | transactions per game | "
           "WAL per game | idle: referee per process, PostgreSQL |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for m in meds:
        out.append(
            f"| {label(m)} | {m['runs']} | {m['games_per_s']:.2f} | "
            f"{m['referee_cpu_ms_per_game']:.0f} ms | {m['referee_us_per_decision']:.0f} µs | "
            f"{m['bots_us_per_decision']:.0f} µs | "
            f"{_f(m['postgres_cpu_ms_per_game'], '.1f')} ms | {_f(m['xacts_per_game'], '.1f')} | "
            f"{_f(m['wal_kb_per_game'], '.1f')} kB | "
            f"{m['idle_referee_ms_per_s_per_process']:.1f}, "
            f"{_f(m['idle_postgres_ms_per_s'], '.1f')} ms/s |")
    return "\n".join(out)


@contextmanager
def postgres_base(url: str | None, statements: bool
                  ) -> Iterator[tuple[str, StatementLog | None]]:
    """``url``, or for the duration a private cluster's (fsync on, as SQLite's FULL sync);
    with ``statements``, the private cluster logs every statement."""
    if url:
        yield url, None
        return
    from tests.support.postgres import start_cluster

    with start_cluster(55499, fsync=True) as cluster:  # durable, as SQLite is
        if not statements:
            yield cluster.url(), None
            return
        log_statements(cluster.url())
        yield cluster.url(), StatementLog(Path(cluster.socket_dir).parent / "log")


def main() -> int:
    if sys.argv[1:2] == ["bot"]:
        return bot_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--games-per-pairing", type=int, default=20)
    ap.add_argument("--bots", type=int, default=6)
    ap.add_argument("--concurrency", type=int, default=4,
                    help="games at once over all processes (split evenly; at least 1 each)")
    ap.add_argument("--per-process", type=int, metavar="N",
                    help="instead: N games at once on each process (N x processes in all)")
    ap.add_argument("--no-sqlite", action="store_true",
                    help="skip the one-process SQLite run of each round")
    ap.add_argument("--idle", type=float, default=10.0,
                    help="seconds of the idle window before each run's start")
    ap.add_argument("--lease", type=float, help="--lease of the shared processes "
                    "(default: chinchon serve's)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per tournament")
    ap.add_argument("--postgres", metavar="URL",
                    help="a server whose user may create databases (default: start a private "
                    "cluster)")
    ap.add_argument("--count-statements", action="store_true",
                    help="log every statement on the private cluster and count them (and "
                    "the claims of games) per game; the logging costs PostgreSQL CPU, so "
                    "its CPU figures are not comparable with a run without")
    ap.add_argument("--json", help="also write the runs and medians to this file")
    ap.add_argument("--markdown", help="also write the tables to this file")
    args = ap.parse_args()
    pairs = args.bots * (args.bots - 1) // 2
    print(f"{args.bots} bots, {pairs} pairings x {args.games_per_pairing} games per run; "
          f"processes {' '.join(map(str, args.processes))}, {args.rounds} rounds; "
          + (f"{args.per_process} games at once per process; " if args.per_process else
             f"{args.concurrency} games at once in all; ")
          + f"{os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    rows: list[dict[str, Any]] = []
    if args.count_statements and args.postgres:
        ap.error("--count-statements needs the private cluster (no --postgres)")
    with postgres_base(args.postgres, args.count_statements) as (base, statements):
        postmaster = postmaster_pid(base)
        if postmaster is None:
            print("PostgreSQL's processes are not visible here: its CPU is not measured",
                  flush=True)
        plan = ([] if args.no_sqlite else [("sqlite", 1)]) + [("postgres", n)
                                                             for n in args.processes]
        for rnd in range(1, args.rounds + 1):
            for store, n in plan:
                r = run_one(store, n, base, args, postmaster, statements)
                r["round"] = rnd
                rows.append(r)
                print(f"  round {rnd} {label(r)}: {r['games']}/{r['scheduled']} games in "
                      f"{r['wall']:.1f} s ({r['games_per_s']:.2f}/s), referee "
                      f"{r['referee_us_per_decision']:.0f} µs/decision, load {r['load']:.1f}",
                      flush=True)
    meds = medians(rows)
    text = markdown(rows) + "\n\nMedians:\n\n" + markdown_medians(meds)
    if statements is not None:
        text += "\n\nStatements per game (BEGIN and COMMIT left out), and claims of a game:\n\n"
        text += "\n".join(f"- round {r['round']} {label(r)}: {r['statements_per_game']:.1f} "
                           f"statements, {r['claims_per_game']:.2f} claims per game"
                           for r in rows if r["statements_per_game"] is not None)
    print()
    print(text)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": rows, "medians": meds}, indent=2))
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
