"""``chinchon serve --shared --workers N``: N referee processes on this host sharing its
database, supervised.

Worker ``i`` serves on the port of ``--address`` plus ``i`` (and, with ``--http``, the web
view on its port plus ``i``): bots are given every address (one stream per process, see
docs/deployment.md). The supervisor starts them, starts again a worker that dies (its
games are voided when their leases run out and played again by the others meanwhile;
after a quick death it waits a little longer each time, up to a minute; a worker that
exits 2, a usage or configuration error, stops them all), and on SIGTERM or SIGINT passes
the signal on and waits for them all to end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from types import FrameType

#: A worker that ran this long before it died is started again at once.
HEALTHY_AFTER = 30.0
#: The longest pause before starting again a worker that keeps dying (seconds).
MAX_PAUSE = 60.0


def split_port(text: str, option: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{option} {text}: with --workers give HOST:PORT with a port (the "
                         "workers serve on it and the ports after it)")
    return host, int(port)


@dataclass
class Worker:
    index: int
    args: list[str]
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    pause: float = 0.0


def worker_args(rest: list[str], n: int, address: str, http: str | None,
                http_url: str | None, metrics: str | None = None) -> list[list[str]]:
    """Each worker's ``chinchon serve`` arguments: ``rest`` (the supervisor's own, without
    ``--workers``), then its address, web view, web URL and metrics endpoint, each worker
    on the port after the previous one's (later options win)."""
    host, port = split_port(address, "--address")
    web = split_port(http, "--http") if http else None
    scrape = split_port(metrics, "--metrics") if metrics else None
    if n > 1 and http_url and "{port}" not in http_url:
        raise ValueError("--http-url: with --workers, write {port} where each worker's web "
                         "port goes (e.g. http://host-a.example.org:{port})")
    out = []
    for i in range(n):
        extra = ["--address", f"{host}:{port + i}"]
        if web is not None:
            extra += ["--http", f"{web[0]}:{web[1] + i}"]
            if http_url:
                extra += ["--http-url", http_url.replace("{port}", str(web[1] + i))]
        if scrape is not None:
            extra += ["--metrics", f"{scrape[0]}:{scrape[1] + i}"]
        out.append([*rest, *extra])
    return out


def _without_workers(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--workers":
            skip = True
        elif not a.startswith("--workers="):
            out.append(a)
    return out


def supervise(argv: list[str], n: int, address: str, http: str | None,
              http_url: str | None, metrics: str | None = None) -> int:
    """Run ``n`` workers (``argv``: the ``serve`` arguments) until SIGTERM or SIGINT;
    the exit code is 0 when every worker ended cleanly then."""
    try:
        plans = worker_args(_without_workers(argv), n, address, http, http_url, metrics)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    workers = [Worker(i, a) for i, a in enumerate(plans)]
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)
        for w in workers:
            if w.proc is not None and w.proc.poll() is None:
                w.proc.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    for w in workers:
        _start(w)
    print(json.dumps({"event": "workers", "count": n,
                      "pids": [w.proc.pid for w in workers if w.proc is not None]}), flush=True)
    codes: dict[int, int] = {}
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        dead = next((x for x in workers if x.proc is not None and x.proc.pid == pid), None)
        if dead is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        assert dead.proc is not None
        dead.proc.returncode = code
        if stopping:
            codes[dead.index] = code
            if len(codes) == n:
                break
            continue
        if code == 2:  # a usage or configuration error: it would fail again
            print(json.dumps({"event": "worker_failed", "worker": dead.index, "pid": pid,
                              "code": code, "note": "stopping the other workers"}), flush=True)
            on_signal(signal.SIGTERM, None)
            codes[dead.index] = code
            continue
        ran = time.monotonic() - dead.started
        dead.pause = 0.0 if ran > HEALTHY_AFTER else min(MAX_PAUSE, max(1.0, dead.pause * 2))
        print(json.dumps({"event": "worker_died", "worker": dead.index, "pid": pid,
                          "code": code, "restart_in": dead.pause}), flush=True)
        deadline = time.monotonic() + dead.pause
        while not stopping and time.monotonic() < deadline:  # a signal ends the pause
            time.sleep(min(0.2, deadline - time.monotonic()))
        if not stopping:
            _start(dead)
    if any(c == 2 for c in codes.values()):
        return 2
    return 0 if all(c == 0 for c in codes.values()) else 1


def _start(w: Worker) -> None:
    w.proc = subprocess.Popen([sys.executable, "-m", "chinchon_referee.cli", "serve", *w.args])
    w.started = time.monotonic()
