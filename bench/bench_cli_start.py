"""How long ``chinchon admin`` takes to start: wall time of ``chinchon admin
--help`` and of one ``admin list`` against a port nobody listens on (the command's whole
import path, then the failed call); and the import paths of a server (``serve --help``,
``tournament run --help``: the test suite starts about 200 servers), beside
two baselines measured in the same run: the interpreter alone (``python -c pass``) and
``import grpc`` (which every admin command needs). Medians of ``--runs`` runs each,
interleaved so that a busy machine slows them alike; then ``python -X importtime``'s top
imports of the admin path.

    python bench/bench_cli_start.py [--runs 15] [--tree DIR]...

``--tree DIR`` (repeatable) also measures another checkout of the project (its
``client_sdk`` and ``server`` on ``PYTHONPATH``), e.g. the code before a change:
``git worktree add /tmp/before <commit>`` or ``git archive <commit> | tar -x -C /tmp/before``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ, CHINCHON_ADMIN_TOKEN="bench-admin-token-0123456789")
    if tree is not None:
        env["PYTHONPATH"] = f"{tree / 'client_sdk'}{os.pathsep}{tree / 'server'}"
    return env


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return time.perf_counter() - t0


def _top_imports(env: dict[str, str], port: int, n: int = 8) -> list[tuple[int, str]]:
    """The largest cumulative import times (µs) of ``admin list``'s top-level imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "chinchon_referee.cli",
                           "admin", "--target", f"127.0.0.1:{port}", "--timeout", "2", "list"],
                          env=env, capture_output=True, text=True, timeout=120)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        if cumulative.isdigit() and not line.split("|")[2].startswith("  "):
            rows.append((int(cumulative), name))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--tree", type=Path, action="append", default=[],
                    help="another checkout to measure beside this one")
    args = ap.parse_args()
    port = _closed_port()
    py = sys.executable
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], _env(None)),
        "python -c 'import grpc'": ([py, "-c", "import grpc"], _env(None)),
    }
    for label, tree in [("this tree", None), *((str(t), t) for t in args.tree)]:
        cli = [py, "-m", "chinchon_referee.cli", "admin"]
        cases[f"admin --help ({label})"] = ([*cli, "--help"], _env(tree))
        cases[f"admin list, nobody listening ({label})"] = (
            [*cli, "--target", f"127.0.0.1:{port}", "--timeout", "2", "list"], _env(tree))
        # A server's import path (without --http: no web view, no Swiss matcher loaded).
        server = [py, "-m", "chinchon_referee.cli"]
        cases[f"serve --help ({label})"] = ([*server, "serve", "--help"], _env(tree))
        cases[f"tournament run --help ({label})"] = (
            [*server, "tournament", "run", "--help"], _env(tree))
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):
        for name, (cmd, env) in cases.items():
            times[name].append(_wall(cmd, env))
    base = statistics.median(times["python -c pass"])
    print(f"{'command':<60} {'median s':>9} {'min s':>7} {'x python':>9}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<60} {med:9.3f} {min(ts):7.3f} {med / base:9.1f}")
    for label, tree in [("this tree", None), *((str(t), t) for t in args.tree)]:
        print(f"\nlargest top-level imports of admin list ({label}), cumulative ms:")
        for us, name in _top_imports(_env(tree), port):
            print(f"  {us / 1000:8.1f}  {name}")


if __name__ == "__main__":
    main()
