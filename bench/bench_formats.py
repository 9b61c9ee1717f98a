"""Competition formats: how many games a Swiss and a round-robin need to put the
strongest bot first, side by side; and how long pairing a Swiss round takes.

    python bench/bench_formats.py                 # 120 tournaments per format, ~25 min
    python bench/bench_formats.py --quick         # 30 per format
    python bench/bench_formats.py --only pairing  # the pairing times alone

**Who is first.** 64 bots of known strength: a strength model, not real bots (a real
game takes the referee about a third of a CPU-second: the thousands of games of each
tournament here, 120 times over, would take days). Bot i has the Elo rating
1500 + 20 x (63 - i): neighbours are 20 Elo apart (the stronger wins 52.9% of their
games) and the field spans 1,260 Elo, about the gap from RandomBot to the sample
StrongBot (which beats GreedyBot 73.5% of games, +177 Elo: docs/benchmarks.md). Each
game is won by its first seat with the Elo probability of the two ratings. Every
tournament is played out by the referee's own planner (``next_games``: the real
pairings, byes, tie-breaks and final ranking), with results drawn from the model;
reported: the share of tournaments whose final ranking puts the strongest bot first,
with its 95% Wilson interval, and the games each took.

**Pairing time.** One Swiss round of 64, 200 and 1,000 bots (rounds 1 to 10, results
random), by ``swiss.pair``, in bands of 64 (the default) and, as the baseline of the
same run, as one graph (only up to 200 bots: 1,000 take minutes).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chinchon_referee.storage import GameRow  # noqa: E402
from chinchon_referee.tournament.formats import swiss  # noqa: E402
from chinchon_referee.tournament.formats.games import Create  # noqa: E402
from chinchon_referee.tournament.formats.plan import Next, Over, next_games  # noqa: E402
from chinchon_referee.tournament.model import TournamentSpec  # noqa: E402
from chinchon_referee.vocabulary import GameStatus  # noqa: E402

from tests.support.formats import finish, row_of  # noqa: E402

BOTS = 64
STEP = 20.0


def strengths(n: int = BOTS) -> dict[str, float]:
    return {f"bot{i:02d}": 1500 + STEP * (n - 1 - i) for i in range(n)}


def play(fmt: Any, gpp: int, seed: int, n: int = BOTS) -> tuple[bool, int]:
    """One tournament: (the strongest ranked first, games played)."""
    elo = strengths(n)
    names = list(elo)
    rng = random.Random(seed)
    order = names[:]
    rng.shuffle(order)  # the declaration's order (seeds) says nothing of the strength
    spec = TournamentSpec.from_dict({"name": "bench", "seed": f"bench-{seed}",
                                     "participants": order, "games_per_pairing": gpp,
                                     **({"format": fmt} if fmt else {})})
    rows: dict[int, GameRow] = {}
    while True:
        step = next_games(spec, "t", list(rows.values()))
        if isinstance(step, Over):
            return step.ranking[0] == names[0], len(rows)
        assert isinstance(step, Next)
        if isinstance(step.step, Create):
            for g in step.step.games:
                rows[g.seq] = row_of(g)
            continue
        for r in rows.values():  # every game of the round at once
            if r.status is not GameStatus.FINISHED:
                a, b = r.players
                p = 1.0 / (1.0 + 10 ** ((elo[b] - elo[a]) / 400))
                finish(r, (0,) if rng.random() < p else (1,))


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.96
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def first_place(sims: int) -> None:
    configs: list[tuple[str, Any, int]] = [
        ("Swiss, 6 rounds (log2 64)", {"kind": "swiss", "rounds": 6}, 2),
        ("Swiss, 8 rounds (the default)", "swiss", 2),
        ("Swiss, 8 rounds", "swiss", 6),
        ("Swiss, 12 rounds", {"kind": "swiss", "rounds": 12}, 6),
        ("Swiss, 8 rounds", "swiss", 16),
        ("Swiss, 12 rounds", {"kind": "swiss", "rounds": 12}, 16),
        ("Swiss, 8 rounds", "swiss", 32),
        ("round-robin", None, 2),
        ("round-robin", None, 4),
        ("round-robin", None, 8),
    ]
    print(f"{BOTS} bots {STEP:g} Elo apart; {sims} tournaments each")
    print("| format | games per pairing | games | strongest first | 95% interval | wall |")
    print("|---|---:|---:|---:|---|---:|")
    for label, fmt, gpp in configs:
        t = time.perf_counter()
        wins, games = 0, 0
        for s in range(sims):
            won, g = play(fmt, gpp, s)
            wins += won
            games = g
        lo, hi = wilson(wins, sims)
        print(f"| {label} | {gpp} | {games:,} | {wins / sims:.0%} | {lo:.0%}–{hi:.0%} | "
              f"{time.perf_counter() - t:.0f} s |", flush=True)


def history_after(bots: list[str], rounds: int, rng: random.Random) -> swiss.History:
    h = swiss.History({}, {}, {}, {})
    for _ in range(rounds):
        rnd = swiss.pair(bots, h, True)
        points, met = dict(h.points), dict(h.met)
        seats, byes = dict(h.seats), dict(h.byes)
        for a, b in rnd.tables:
            met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
            seats[a] = seats.get(a, 0) + 1
            seats[b] = seats.get(b, 0) - 1
            w = a if rng.random() < 0.5 else b
            points[w] = points.get(w, 0.0) + 1
        for b in rnd.byes:
            byes[b] = byes.get(b, 0) + 1
            points[b] = points.get(b, 0.0) + 0.5
        h = swiss.History(points, met, byes, seats)
    return h


def pairing(rounds: list[int]) -> None:
    print("| bots | round | bands of 64 | one graph (baseline) | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for n in (64, 200, 1000):
        bots = [f"b{i}" for i in range(n)]
        for r in rounds:
            h = history_after(bots, r - 1, random.Random(r))
            t = time.perf_counter()
            swiss.pair(bots, h, True)
            banded = time.perf_counter() - t
            whole = ""
            ratio = ""
            if n <= 200:
                t = time.perf_counter()
                swiss.pair(bots, h, True, band=n + 1)
                one = time.perf_counter() - t
                whole, ratio = f"{one:.2f} s", f"{one / banded:.1f}x"
            print(f"| {n:,} | {r} | {banded:.2f} s | {whole} | {ratio} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sims", type=int)
    ap.add_argument("--only", choices=["first", "pairing"])
    a = ap.parse_args()
    if a.only != "pairing":
        first_place(a.sims or (30 if a.quick else 120))
    if a.only != "first":
        pairing([1, 2, 5, 10] if not a.quick else [1, 5])


if __name__ == "__main__":
    main()
