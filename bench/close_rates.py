"""How often each ``close_max_unmatched`` lets a hand close (docs/rules.md, section 6).

    python bench/close_rates.py            # ~2-4 min
    python bench/close_rates.py --quick    # fewer hands and games

Two measures, deterministic (seeded), default rules otherwise (40 cards, no joker,
close_max_points 5):

1. **Dealt hands.** Random 8-card hands (seven and the card drawn): the share from which
   some discard allows a close, for close_max_unmatched = 0, 1, 2, 3 and 7 (7: any
   number of unmatched cards, only their points bound).
2. **Games.** GreedyBot against GreedyBot (it closes as soon as it may): the share of
   hands that end with a close (the others run the stock out twice), the mean turns of
   a hand, the mean points of the closer and of the other player, and the share of
   closes that left two unmatched cards or more.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys

from chinchon.engine import GreedyBot, RuleSet, deck_cards, mask_of, play_game, solver_for
from chinchon.engine.game import HandEnd

LIMITS = (0, 1, 2, 3, 7)


def dealt(hands: int) -> dict[int, float]:
    rng = random.Random("close-rates")
    deck = list(deck_cards(40, 0))
    samples = [rng.sample(deck, 8) for _ in range(hands)]
    out = {}
    for k in LIMITS:
        solver = solver_for(RuleSet(close_max_unmatched=k))
        n = 0
        for cards in samples:
            mask = mask_of(cards)
            if solver.may_close_some(mask) and any(
                    solver.can_close(mask & ~(1 << c)) for c in cards):
                n += 1
        out[k] = n / hands
    return out


def games(count: int) -> dict[int, dict[str, float]]:
    out = {}
    for k in LIMITS:
        rules = RuleSet(close_max_unmatched=k)
        closed = total = many = 0
        closer_pts: list[int] = []
        other_pts: list[int] = []
        turns: list[int] = []  # turns (discards and closes) of each hand
        for g in range(count):
            state, rec = play_game(rules, [GreedyBot(), GreedyBot()], f"close-rates-{g}", "d")
            for a in rec["actions"]:
                if "deal" in a:
                    turns.append(0)
                move = a.get("move", {}).get("action", {})
                if "discard" in move or "close" in move:
                    turns[-1] += 1
            for hr in state.results:
                total += 1
                if hr.end in (HandEnd.CLOSED, HandEnd.CHINCHON):
                    closed += 1
                    closer_pts.append(hr.points[hr.closer])
                    other_pts.append(hr.points[1 - hr.closer])
                    if len(hr.unmatched[hr.closer]) >= 2:
                        many += 1
        out[k] = {
            "hands": total,
            "closed": closed / total,
            "turns": statistics.mean(turns),
            "closer": statistics.mean(closer_pts) if closer_pts else float("nan"),
            "other": statistics.mean(other_pts) if other_pts else float("nan"),
            "many": many / closed if closed else 0.0,
        }
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    hands, count = (20_000, 40) if args.quick else (100_000, 200)
    d = dealt(hands)
    gm = games(count)
    print(f"dealt 8-card hands: {hands:,}; greedy vs greedy games: {count} per setting\n")
    print("| close_max_unmatched | dealt hands that may close | hands closed (games) "
          "| turns per hand | closer's points | other's points | closes with 2+ unmatched |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k in LIMITS:
        g = gm[k]
        print(f"| {k} | {100 * d[k]:.2f}% | {100 * g['closed']:.1f}% of {g['hands']:.0f} "
              f"| {g['turns']:.1f} | {g['closer']:+.1f} | {g['other']:+.1f} "
              f"| {100 * g['many']:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
