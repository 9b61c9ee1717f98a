"""Can a scraper of ``/metrics`` slow the games? An honest game's decisions/s while 8
clients scrape the referee's metrics endpoint at full speed, against the same scrapers
aimed at a plain HTTP server in a process of its own (the control), in the same run.

One ``chinchon serve --metrics 127.0.0.1:0`` (default bounds; SQLite in a temporary
folder) plays a round-robin of 6 fast raw bots that never ends while the bench runs
(bench_spectator.py's harness: its ``Run`` and honest bots). Windows alternate, scrapers
on the metrics endpoint, then on the control (the order swapped each round), for
``--rounds`` rounds. The scrapers are one process at nice 19 (it stands for another
machine: on a 2-core box its own CPU would otherwise be what is measured) running 8
clients, each a loop of connect, ``GET /metrics``, read to the end. The control answers
every request with 200 and a body of the page's size, unniced. Measured in each window:
honest decisions/s (counted by the bots), the scrapers' answers by status, the CPU of
the referee, of the metrics process and of the control. The goal: metrics/control >= 0.8.

    python bench/bench_metrics.py                       # 3 rounds of 15 s windows: ~3 minutes
    python bench/bench_metrics.py --rounds 1 --window 5
    python bench/bench_metrics.py --smoke --json out.json   # a check, no figure
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness.measure import cpu_seconds, finish  # noqa: E402
from harness.spectated import Run, measured  # noqa: E402

#: The control's body: about the metrics page's size.
BODY = b"# a page of the size of the metrics page\n" * 64


# -- the control: a plain HTTP server of its own ----------------------------------------


async def _control() -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
              + str(len(BODY)).encode() + b"\r\nConnection: close\r\n\r\n" + BODY)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    server.close()


# -- the scrapers -------------------------------------------------------------------------


async def _scrape(host: str, port: int, clients: int) -> None:
    statuses: Counter[str] = Counter()
    request = f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()

    async def one() -> None:
        while True:
            try:
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(request)
                data = await reader.read()
                writer.close()
                statuses[data[9:12].decode() if data.startswith(b"HTTP/") else "closed"] += 1
            except OSError as e:
                statuses[type(e).__name__] += 1
                await asyncio.sleep(0.01)

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tasks = [asyncio.ensure_future(one()) for _ in range(clients)]
    print(json.dumps({"ready": True}), flush=True)
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(dict(statuses)), flush=True)


def _started(args: list[str], nice: int = 0) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    p = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True,
                         preexec_fn=(lambda: os.nice(nice)) if nice else None)
    assert p.stdout is not None
    first = p.stdout.readline()
    if not first.startswith("{"):
        raise RuntimeError(f"{args[0]} did not start: {first!r}")
    return p, json.loads(first)


def _ended(p: subprocess.Popen[str]) -> dict[str, Any]:
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=120)
    lines = out.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


# -- the run ------------------------------------------------------------------------------


def _window(run: Run, target: str, port: int, control_pid: int, args: argparse.Namespace,
            kind: str) -> dict[str, Any]:
    scraper, _ = _started(["scrape", "--port", str(port), "--clients", str(args.clients)], nice=19)
    time.sleep(args.settle)
    pids = {"referee": run.pid, "metrics": run.metrics_pid, "control": control_pid}
    cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
    a = time.monotonic()
    time.sleep(args.window)
    b = time.monotonic()
    cpu = {k: cpu_seconds(p) - cpu0[k] for k, p in pids.items()}
    statuses = _ended(scraper)
    return {"kind": kind, "target": target, "a": a, "b": b, "cpu": cpu, "statuses": statuses}


def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    run = Run(tmp, "metrics", http=False, extra=("--metrics", "127.0.0.1:0"))
    control, hello = _started(["control"])
    windows: list[dict[str, Any]] = []
    try:
        run.wait_playing()
        time.sleep(args.warmup)
        metrics_port = int(run.metrics_url.rsplit(":", 1)[1].split("/", 1)[0])
        order = [("metrics", metrics_port), ("control", int(hello["port"]))]
        for rnd in range(args.rounds):
            for kind, port in order if rnd % 2 == 0 else order[::-1]:
                windows.append(_window(run, kind, port, control.pid, args, kind))
                print(f"  round {rnd + 1} {kind}: {windows[-1]['statuses']}", flush=True)
    finally:
        _ended(control)
        bots = run.stop()
    for w in windows:
        w.update(measured(bots, w.pop("a"), w.pop("b")))
    def mean(kind: str) -> float:
        xs = [w["decisions_per_s"] for w in windows if w["kind"] == kind]
        return sum(xs) / len(xs)

    return {"windows": windows, "metrics_per_s": mean("metrics"),
            "control_per_s": mean("control"), "ratio": mean("metrics") / mean("control"),
            "terminations": dict(run.terminations())}


def report(out: dict[str, Any]) -> None:
    for w in out["windows"]:
        answers = sum(v for k, v in w["statuses"].items() if k.isdigit())
        cpu = " ".join(f"{k} {v:.2f}s" for k, v in w["cpu"].items())
        print(f"{w['kind']:8} {w['decisions_per_s']:8.0f} decisions/s   scrapes answered "
              f"{answers:6d} {dict(w['statuses'])}   CPU {cpu}")
    print(f"metrics / control: {out['ratio']:.2f}x  ({out['metrics_per_s']:.0f} vs "
          f"{out['control_per_s']:.0f} decisions/s; goal >= 0.8x)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["control"]:
        asyncio.run(_control())
        return 0
    if argv[:1] == ["scrape"]:
        sp = argparse.ArgumentParser(prog="bench_metrics.py scrape")
        sp.add_argument("--port", type=int, required=True)
        sp.add_argument("--clients", type=int, default=8)
        a = sp.parse_args(argv[1:])
        asyncio.run(_scrape("127.0.0.1", a.port, a.clients))
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=15.0, help="seconds of a measured window")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds the scrapers run before a window is measured")
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=8, help="scrapers at full speed")
    ap.add_argument("--smoke", action="store_true", help="every part for a second: a check")
    ap.add_argument("--json", help="write every figure here")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rounds, args.window, args.settle, args.warmup = 1, 1.0, 0.5, 0.5
    print(f"bench_metrics: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          f"{args.rounds} rounds of {args.window:g} s windows, {args.clients} scrapers", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-metrics-") as tmp:
        out = bench(args, Path(tmp))
    out["load"] = os.getloadavg()[0]
    return finish(out, args.json, report)


if __name__ == "__main__":
    sys.exit(main())
