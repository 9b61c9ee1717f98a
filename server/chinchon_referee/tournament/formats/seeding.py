"""A stage's seeds: the order of its bots, seed 1 first.

The seeds place bots in a bracket (:func:`.bracket.slot_order`), give a Swiss its
pairing numbers (its order within a score group, and who is lowest-ranked for a
bye), snake a round-robin's bots over its groups, and break the last ties of every
ranking.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence

from .spec import Seeding, Stage


def seeded(stage: Stage, index: int, bots: Sequence[str], declared: Sequence[str],
           ratings: Mapping[str, float | None], seed: str) -> list[str]:
    """The stage's bots, seed 1 first. ``bots``: who is in it (for a later stage, the
    previous stage's final ranking, best first); ``declared``: the participants in
    declaration order."""
    how = stage.seeding_for(index)
    place = {n: i for i, n in enumerate(declared)}
    in_order = sorted(bots, key=lambda b: place[b])
    if how is Seeding.STANDINGS:
        return list(bots)
    if how is Seeding.ORDER:
        return in_order
    if how is Seeding.RATINGS:
        return sorted(in_order, key=lambda b: -(ratings.get(b) or 0.0))
    if how is Seeding.RANDOM:
        rng = random.Random(hashlib.sha256(f"{seed}/stage{index}/seeding".encode()).digest())
        rng.shuffle(in_order)
        return in_order
    listed = [b for b in stage.seeds if b in set(bots)]
    return listed + [b for b in in_order if b not in set(listed)]


def snake(bots: Sequence[str], groups: int) -> list[list[str]]:
    """``bots`` (seed order) dealt over ``groups`` back and forth: 1 2 3 4 | 8 7 6 5 | ...,
    so every group gets one of the top seeds and its strength is even."""
    out: list[list[str]] = [[] for _ in range(groups)]
    for i, b in enumerate(bots):
        lap, pos = divmod(i, groups)
        out[pos if lap % 2 == 0 else groups - 1 - pos].append(b)
    return out
