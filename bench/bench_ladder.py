"""How many games a ladder needs to order bots of known different strength, and how
many a late entrant needs to reach its place (docs/ladder.md).

    python bench/bench_ladder.py --ladders 5  # 5 bots, 5 ladders of 300 games, ~2 min
    python bench/bench_ladder.py --quick      # 2 ladders of 150 games, ~1 min

Real games of the engine's bots (no referee: the games themselves are the cost), played
by the ladder's own pure core: matchmaking (``next_tables``: 2 tables at once, all the
bots idle between rounds, each bot's share of the tables started counted) and ratings
(openskill's Plackett-Luce, ``update``), the leaderboard by mu - 3 sigma. The bots:
StrongBot, GreedyBot, GreedyBot playing a random legal action half the time ("noisy
greedy"), StrongBot doing so a fifth of the time ("noisy strong"), and RandomBot.

**The true order** is measured in the same run, as the baseline: a duplicate round-robin
of every pair (``--reference`` games per pair, each deal played twice with the seats
swapped), its order by points. Reported per ladder: **N**, the first game count after
which the leaderboard's order is the true order and stays so to the end; and, for a
StrongBot entered late (after ``--late`` games, as a second strong entrant "strong-late"
whose true place is next to "strong": 1st or 2nd), **M**, the games it plays until it
ranks 1st or 2nd and stays there to the end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chinchon_referee.ladder.leaderboard import Standing, leaderboard  # noqa: E402
from chinchon_referee.ladder.matchmaking import LastTable, next_tables  # noqa: E402
from chinchon_referee.ladder.ratings import PRIOR, Rating, update  # noqa: E402
from harness.ladder_bots import MAKERS, play, reference, settled_at  # noqa: E402


def ladder(names: list[str], games: int, seed: int, late: int
           ) -> tuple[list[list[str]], list[tuple[int, int]]]:
    """Play a ladder: the leaderboard's order after each game, and (games played by
    strong-late, its rank) after each of its games."""
    ratings: dict[str, Rating] = {}
    played: dict[str, int] = {}
    last: dict[str, LastTable] = {}
    orders: list[list[str]] = []
    late_track: list[tuple[int, int]] = []
    started: list[tuple[str, ...]] = []
    n = 0
    while n < games:
        field = names + (["strong-late"] if n >= late else [])
        for b in field:
            ratings.setdefault(b, PRIOR)
        for table in next_tables(field, ratings, last, 2, 2, False, started, len(field)):
            started.append(table)
            places = play(table, f"ladder-{seed}", f"g{n}", n + 1000 * seed)
            after = update([ratings[p] for p in table], places)
            for s, (p, r) in enumerate(zip(table, after, strict=True)):
                ratings[p], last[p] = r, LastTable(table, s)
                played[p] = played.get(p, 0) + 1
            n += 1
            board = leaderboard([Standing(b, ratings[b], played.get(b, 0)) for b in field], 3.0)
            order = [p.standing.bot for p in board]
            orders.append(order)
            if "strong-late" in table:
                late_track.append((played["strong-late"], order.index("strong-late") + 1))
    return orders, late_track


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ladders", type=int, default=3)
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--late", type=int, default=100)
    ap.add_argument("--reference", type=int, default=40, help="games per pair, true order")
    args = ap.parse_args(argv)
    if args.quick:
        args.ladders, args.games, args.late, args.reference = 2, 150, 60, 20
    names = list(MAKERS)
    t = time.perf_counter()
    truth = reference(names, args.reference)
    print(f"true order ({args.reference} games per pair, {time.perf_counter() - t:.0f} s): "
          f"{' > '.join(truth)}")
    for seed in range(args.ladders):
        t = time.perf_counter()
        orders, late = ladder(names, args.games, seed, args.late)
        # strong-late's true place: next to strong (1st or 2nd).
        n = settled_at(orders, lambda o: [b for b in o if b != "strong-late"] == truth)
        m = settled_at([[str(r)] for _, r in late], lambda o: int(o[0]) <= 2)
        m_games = late[m - 1][0] if m is not None else None
        print(f"ladder {seed}: {args.games} games ({time.perf_counter() - t:.0f} s); order true "
              f"from game N = {n}; strong-late (entered at game {args.late}) in its place "
              f"after M = {m_games} of its games; final: {' > '.join(orders[-1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
