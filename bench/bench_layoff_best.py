"""How long ``layoff best`` takes when many cards fit many melds, beside a single lay-off.

    python bench/bench_layoff_best.py            # a few seconds
    python bench/bench_layoff_best.py --reps 50

Two positions, each a lay-off turn of seat 2 (48 cards, two jokers, three players):

* ``seven onto four runs``: seat 2 holds 3O 7O 3C 7C 7E 11B JK1, every one of which
  fits one of four runs on the table (4O 5O 6O, 4C 5C 6C, 8E 9E 10E, 8B 9B 10B), so
  every order of the same lay-offs reaches the same position: the search must not
  try them all (before it remembered positions, it took seconds);
* ``one card`` (the baseline): the same table, seat 2 holds one card that fits and
  six that do not.

Each ``apply(state, LAYOFF_BEST)`` is timed in process CPU time (a shared machine's
neighbours do not count), once to warm up and then ``--reps`` times, interleaved; the
median is printed, and the ratio of the two. The engine's tests check what the search
finds (tests/engine/test_engine_scenarios.py), not how long it takes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chinchon.engine import (
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Close,
    GameState,
    RuleSet,
    apply,
    parse_card,
)

from tests.support.engine import position

RULES = RuleSet(players=3, jokers=2, deck=48)
CLOSER, RUNS = "4O 5O 6O 4C 5C 6C 1B", "8E 9E 10E 8B 9B 10B 12O"


def lay_off_turn(seat2: str) -> GameState:
    """Seat 0 closes with two runs, seat 1 lays down two more; seat 2 is to lay off."""
    st = position(RULES, {0: CLOSER, 1: RUNS, 2: seat2}, "11C", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(parse_card("12B")))
    st = apply(apply(st, PASS), LAYDOWN_BEST)
    assert len(st.table) == 4 and st.to_act == 2
    return st


POSITIONS = {
    "seven onto four runs": lay_off_turn("3O 7O 3C 7C 7E 11B JK1"),
    "one card": lay_off_turn("3O 1C 2E 12C 1E 2B 3B"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in POSITIONS}
    for st in POSITIONS.values():
        apply(st, LAYOFF_BEST)
    for _ in range(args.reps):
        for name, st in POSITIONS.items():
            t0 = time.process_time()
            apply(st, LAYOFF_BEST)
            times[name].append(time.process_time() - t0)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"median of {args.reps} runs, process CPU time")
    for name, t in med.items():
        print(f"  layoff best, {name:22} {t * 1000:8.2f} ms")
    print(f"  ratio: {med['seven onto four runs'] / med['one card']:.1f}x the single lay-off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
