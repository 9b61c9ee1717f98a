"""Hashes of the engine's answers, to compare two versions of the engine (same answers?).

    .venv/bin/python bench/engine_answers.py                                  # this checkout
    PYTHONPATH=/work/main/client_sdk .venv/bin/python bench/engine_answers.py  # another one

Prints one hash of the solver's answers (best_arrangement, deadwood, is_full, closing,
full_arrangement) on 36,000 hands over nine rule sets, a third of them biased towards
three or four cards of a rank, and one hash of the records of 63 seeded games (greedy vs
random, strong vs greedy, strong vs strong over seven rule sets). Equal hashes: the same
answers and the same play. ~25 s.
"""

from __future__ import annotations

import hashlib
import random

from chinchon.engine import Bot, GreedyBot, RandomBot, RuleSet, play_game
from chinchon.engine.cards import deck_cards
from chinchon.engine.record import dumps
from chinchon.engine.solver import solver_for
from chinchon.strategies.strong import StrongBot

RULES = [
    RuleSet(),
    RuleSet(jokers=2),
    RuleSet(jokers=1),
    RuleSet(deck=48),
    RuleSet(deck=48, jokers=2),
    RuleSet(jokers=2, jokers_per_meld=1),
    RuleSet(wild_cards=("1O",)),
    RuleSet(jokers=1, wild_cards=("1O",)),
    RuleSet(close_max_unmatched=2, close_max_points=5),
]


def solver_hash(hands_per_rule_set: int = 4000) -> str:
    out = hashlib.sha256()
    for ri, rules in enumerate(RULES):
        s = solver_for(rules)
        deck = list(deck_cards(rules.deck, rules.jokers))
        rng = random.Random(ri)
        for i in range(hands_per_rule_set):
            mask = 0
            for c in rng.sample(deck, rng.choice((5, 6, 7, 7, 8, 8, 9, 10))):
                mask |= 1 << c
            if i % 3 == 0:  # three or four of a rank, often
                rank = rng.randrange(12)
                if rank + 1 in rules.ranks:
                    mask |= sum(1 << (12 * x + rank) for x in range(4) if rng.random() < 0.8)
            line = repr((s.best_arrangement(mask), s.deadwood(mask), s.is_full(mask)))
            if mask.bit_count() >= 7:
                h7 = mask & ~(1 << (mask.bit_length() - 1)) if mask.bit_count() == 8 else mask
                line += repr(s.closing(h7))
            if s.is_full(mask):
                line += repr(s.full_arrangement(mask))
            out.update(line.encode())
    return out.hexdigest()


def games_hash(seeds: int = 3) -> tuple[int, str]:
    out = hashlib.sha256()
    games = 0
    for ri, rules in enumerate(RULES[:7]):
        for seed in range(seeds):
            pairs: list[list[Bot]] = [
                [GreedyBot(), RandomBot(seed)],
                [StrongBot(seed), GreedyBot()],
                [StrongBot(seed), StrongBot(seed + 1)],
            ]
            for bots in pairs:
                _, record = play_game(rules, bots, f"chk-{ri}-{seed}")
                out.update(dumps(record).encode())
                games += 1
    return games, out.hexdigest()


if __name__ == "__main__":
    print("solver", solver_hash())
    games, digest = games_hash()
    print("games", games, digest)
