"""What the sandbox of launched bots costs, and what its CPU quota buys.

Three parts, each against a baseline measured in the same run, alternately:

* **start-up**: a bot process that starts and imports the SDK and gRPC
  (``python -c "import chinchon.sdk, grpc"``), launched plainly and in its sandbox
  (bubblewrap, prlimit, and a cgroup where there are cgroups): the median wall time of
  each, ``--starts`` times;
* **decisions/s**: one practice session (``run_practice``, as ``chinchon practice`` and
  ``chinchon bots check`` play it) of the Python SDK's random bot against the house
  random bot, ``--games`` games, the bot unconfined on TCP and sandboxed on the Unix
  socket, alternately for ``--rounds`` pairs: the bot's decisions per second of wall
  time (one game at a time: the inverse of its mean round trip, decision included);
* **a tournament**: ``chinchon tournament run`` of 4 SDK greedy bots (a round-robin of
  6 pairings, ``--cup-games`` games each, 4 by default: 24 games, concurrency 4),
  unconfined and with ``[sandbox] default = true``,
  alternately for ``--rounds`` pairs: decisions (every move of its records) per second
  of the span from its first game's start to its last game's end;
* **a spinning neighbour**: the same unconfined practice session, quiet, then while a
  4-process CPU spinner runs sandboxed (``cpu = 1.0``: a quota of one core; then
  ``cpu = 0.25``), then while the same spinner runs unconfined: decisions/s of each,
  against the mean of the quiet sessions before and after.

    python bench/bench_sandbox.py                     # ~2 minutes
    python bench/bench_sandbox.py --smoke --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet
from chinchon_referee.cli.practice import run_practice
from chinchon_referee.config import TimeControl
from chinchon_referee.launch.bots import Keep, Sandboxed, launch, start_confined
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.limits import Limits
from chinchon_referee.launch.sandbox import SandboxSpec, python_runtime

IMPORT = [sys.executable, "-c", "import chinchon.sdk, grpc"]
BOT = [sys.executable, "-m", "chinchon.sdk", "--bot", "random"]
#: 4 processes spinning (each child dies with its parent: PR_SET_PDEATHSIG).
SPIN = [sys.executable, "-c",
        "import ctypes, os\nfor _ in range(3):\n    if os.fork() == 0:\n"
        "        ctypes.CDLL(None).prctl(1, 9)\n        break\nwhile True: pass"]


async def _timed(start: Any) -> float:
    t = time.perf_counter()
    proc = await start()
    code = await proc.wait(120)
    assert code == 0, (code, list(proc.err))
    return time.perf_counter() - t


async def startup(confinement: Confinement, folder: Path, n: int) -> dict[str, Any]:
    plain: list[float] = []
    boxed: list[float] = []
    spec = SandboxSpec(folder, None, Limits(), python_runtime())
    for _ in range(n):
        plain.append(await _timed(lambda: launch(IMPORT, "x", "t", stdout=Keep.DISCARD)))
        boxed.append(await _timed(lambda: start_confined(
            IMPORT, Sandboxed(confinement, spec, "bench"), stdout=Keep.DISCARD)))
    p, b = statistics.median(plain), statistics.median(boxed)
    return {"plain_ms": round(p * 1000, 1), "sandboxed_ms": round(b * 1000, 1),
            "extra_ms": round((b - p) * 1000, 1)}


async def practice(games: int, confine: Any = None) -> float:
    """The bot's decisions per second of wall time over ``games`` practice games."""
    rate, _ = await practice_times(games, confine)
    return rate


async def practice_times(games: int, confine: Any = None) -> tuple[float, float]:
    """The bot's decisions per second of wall time over ``games`` practice games, and the
    99th percentile of its decision times on the referee's clock (ms: from the request
    written to the answer read, what a bot starved of CPU pays)."""
    t = time.perf_counter()
    rep = await run_practice(BOT, games, "random", RuleSet(), TimeControl(2.0, 30.0),
                             "bench-seed", "bench", confine=confine)
    wall = time.perf_counter() - t
    assert rep.clean, rep.incidents
    seats = [o.spec.players.index("bench") for o in rep.outcomes]
    thinks = [float(a["move"]["thinkTime"].rstrip("s"))
              for o, seat in zip(rep.outcomes, seats, strict=True) for a in o.record["actions"]
              if "move" in a and a["move"].get("seat", 0) == seat and "thinkTime" in a["move"]]
    p99 = statistics.quantiles(thinks, n=100)[98] if len(thinks) > 1 else 0.0
    return len(thinks) / wall, p99 * 1000


async def throughput(confinement: Confinement, folder: Path, rounds: int,
                     games: int) -> dict[str, Any]:
    def confine(sock: Path) -> Sandboxed:
        return Sandboxed(confinement, SandboxSpec(folder, sock, Limits(), python_runtime()),
                         "bench")

    pairs = []
    for _ in range(rounds):
        plain = await practice(games)
        boxed = await practice(games, confine)
        pairs.append({"plain": round(plain), "sandboxed": round(boxed),
                      "ratio": round(boxed / plain, 3)})
    return {"pairs": pairs, "median_ratio": statistics.median(p["ratio"] for p in pairs)}


async def _with_boxed_spinner(confinement: Confinement, folder: Path, games: int,
                              cpu: float) -> tuple[float, float]:
    spec = SandboxSpec(folder, None, Limits(cpu=cpu), python_runtime())
    spinner = await start_confined(SPIN, Sandboxed(confinement, spec, "spinner"),
                                   stdout=Keep.DISCARD, stderr=Keep.DISCARD)
    try:
        return await practice_times(games)
    finally:
        await spinner.kill()


async def neighbour(confinement: Confinement, folder: Path, games: int) -> dict[str, Any]:
    """An honest bot's decisions/s and decision-time p99 beside a spinning neighbour:
    sandboxed with a quota of one core, of a quarter, and unconfined; against quiet."""
    quiet = await practice_times(games)
    boxed = await _with_boxed_spinner(confinement, folder, games, 1.0)
    quarter = await _with_boxed_spinner(confinement, folder, games, 0.25)
    loose = await launch(SPIN, "x", "t", stdout=Keep.DISCARD, stderr=Keep.DISCARD)
    try:
        unconfined = await practice_times(games)
    finally:
        await loose.kill()  # its children die with it (PR_SET_PDEATHSIG)
    quiet2 = await practice_times(games)
    base = (quiet[0] + quiet2[0]) / 2
    p99 = (quiet[1] + quiet2[1]) / 2
    return {"quiet": round(base), "spinner_sandboxed": round(boxed[0]),
            "spinner_sandboxed_quarter": round(quarter[0]),
            "spinner_unconfined": round(unconfined[0]),
            "ratio_sandboxed": round(boxed[0] / base, 3),
            "ratio_sandboxed_quarter": round(quarter[0] / base, 3),
            "ratio_unconfined": round(unconfined[0] / base, 3),
            "p99_ms_quiet": round(p99, 2), "p99_ms_spinner_sandboxed": round(boxed[1], 2),
            "p99_ms_spinner_sandboxed_quarter": round(quarter[1], 2),
            "p99_ms_spinner_unconfined": round(unconfined[1], 2),
            "p99_ratio_sandboxed": round(boxed[1] / p99, 3) if p99 else None,
            "p99_ratio_unconfined": round(unconfined[1] / p99, 3) if p99 else None}

CUP = """
name = "bench cup"
table_size = 2
games_per_pairing = {per_pairing}
concurrency = 4
start = "when_connected"
seed = "bench-cup"
{sandbox}
[time_control]
per_move = 2.0
bank = 30.0
"""


def _cup_rate(folder: Path, sandboxed: bool, per_pairing: int) -> float:
    """One tournament run: its decisions per second of play."""
    run = folder / ("boxed" if sandboxed else "plain")
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    parts = "".join(f'\n[[participants]]\nname = "greedy-{i}"\nfolder = "."\n'
                    f'command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]\n'
                    for i in range(4))
    (run / "cup.toml").write_text(CUP.format(sandbox="[sandbox]\ndefault = true\n"
                                             if sandboxed else "", per_pairing=per_pairing) + parts)
    proc = subprocess.run([sys.executable, "-m", "chinchon_referee.cli", "tournament", "run",
                           "cup.toml", "--results", "res", "--quiet", "--http", "off"],
                          cwd=run, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    with sqlite3.connect(run / "res" / "tournament.sqlite3") as db:
        rows = db.execute("SELECT started, finished, record, record_z FROM games").fetchall()
    moves = 0
    for _, _, text, packed in rows:
        record = json.loads(text if text else zlib.decompress(packed).decode())
        moves += sum(1 for a in record["actions"] if "move" in a)
    span = max(r[1] for r in rows) - min(r[0] for r in rows)
    return moves / span


def tournament(folder: Path, rounds: int, per_pairing: int) -> dict[str, Any]:
    pairs = []
    for _ in range(rounds):
        plain, boxed = _cup_rate(folder, False, per_pairing), _cup_rate(folder, True, per_pairing)
        pairs.append({"plain": round(plain), "sandboxed": round(boxed),
                      "ratio": round(boxed / plain, 3)})
    return {"pairs": pairs, "median_ratio": statistics.median(p["ratio"] for p in pairs)}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    confinement = Confinement.find()
    try:
        with tempfile.TemporaryDirectory(prefix="chbench-") as d:
            folder = Path(d)
            out: dict[str, Any] = {"cgroups": confinement.warning is None}
            out["startup"] = await startup(confinement, folder, args.starts)
            print("start-up:", out["startup"], flush=True)
            out["throughput"] = await throughput(confinement, folder, args.rounds, args.games)
            print("decisions/s:", out["throughput"], flush=True)
            out["tournament"] = await asyncio.to_thread(tournament, folder, args.rounds,
                                                       args.cup_games)
            print("tournament decisions/s:", out["tournament"], flush=True)
            if confinement.warning is None:
                out["neighbour"] = await neighbour(confinement, folder, args.games)
                print("spinning neighbour:", out["neighbour"], flush=True)
            return out
    finally:
        confinement.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--cup-games", type=int, default=4,
                    help="games per pairing of the tournament part (default 4: 24 games)")
    ap.add_argument("--smoke", action="store_true", help="every part briefly (a check)")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    if a.smoke:
        a.starts, a.rounds, a.games, a.cup_games = 2, 1, 1, 1
    result = asyncio.run(main(a))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2))
