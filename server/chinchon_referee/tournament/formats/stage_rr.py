"""Round-robin stages (with groups) and gauntlets: every game known when the stage
starts, all created at once.

* **round-robin** (a later stage, or with ``groups``): the stage's bots, snaked over
  the groups by seed (:func:`.seeding.snake`), each group a round-robin of its own
  (every table of the group, seats rotated, as the tournament's round-robin plays);
  the groups' games interleaved step by step. Ranking: each group by the stage's
  tie-breaks; then every group's first (among themselves by points per game, then
  seed), then every group's second, and so on; so ``advance = groups`` passes the
  group winners on.
* **gauntlet**: each challenger plays every bot of the field (the other participants);
  challengers do not meet each other, nor the field itself. Ranking: the challengers
  first, by the stage's tie-breaks (points, rating), then the field.
"""

from __future__ import annotations

import itertools
from abc import abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

from ..round_robin import RoundRobin
from ..standings import GameSummary, ranking
from .games import Create, Done, NewGame, StageRun, StageStep, missing
from .kinds.base import FormatKind
from .kinds.registry import order_of
from .layout import stage_seed
from .seeding import snake
from .spec import rotation_games


@lru_cache(maxsize=16)
def _schedule(bots: tuple[str, ...], groups: int, k: int, games: int, seed: str, index: int,
              duplicate: bool, challengers: tuple[str, ...]) -> tuple[tuple[int, tuple[str, ...],
                                                                            str, int], ...]:
    """(local seq, players, deal, step) of every game of the stage."""
    if challengers:
        field = [b for b in bots if b not in set(challengers)]
        tables: list[tuple[str, ...]] = [(c, f) for c in challengers for f in field]
    else:
        tables = []
        for g, members in enumerate(snake(bots, groups)):
            tables += RoundRobin(members, k, games, stage_seed(seed, index, g),
                                 duplicate=duplicate).tables
    rr = RoundRobin(sorted(set(itertools.chain(*tables))), k, games, stage_seed(seed, index),
                    duplicate=duplicate, tag="", tables=tables)
    per_step = len(rr.tables) * k
    return tuple((p.seq, p.players, p.deal_id.lstrip("/"), p.seq // per_step + 1) for p in rr)


def expected(run: StageRun) -> list[NewGame]:
    s, ctx = run.stage, run.ctx
    plan = _schedule(run.bots, s.groups, ctx.table_size, rotation_games(s, ctx), run.seed,
                     run.index, ctx.duplicate_deals, tuple(s.challengers))
    return [run.new(local, players, deal, step) for local, players, deal, step in plan]


class AllAtOnce(FormatKind):
    """A kind whose stage's games are all known when it starts (round-robin, gauntlet):
    created at once, ranked by :meth:`rank` once all are finished."""

    def advance(self, run: StageRun) -> StageStep:
        todo = missing(expected(run), run.games) if len(run.games) < run.layout.span else []
        if todo:
            return Create(tuple(todo))
        if not all(g.finished for g in run.games):
            return run.waiting()
        return Done(tuple(self.rank(run)))

    @abstractmethod
    def rank(self, run: StageRun) -> list[str]:
        """The stage's final ranking."""


def rank_gauntlet(run: StageRun) -> list[str]:
    """The challengers first, by the stage's tie-breaks, then the field."""
    s = run.stage
    order = ranking(run.bots, run.summaries(), run.ctx.table_size, tiebreaks=order_of(s),
                    seeds=run.seeds)
    first = set(s.challengers)
    return [b for b in order if b in first] + [b for b in order if b not in first]


def rank_groups(run: StageRun) -> list[str]:
    """One group by the stage's tie-breaks; several place by place."""
    s, k = run.stage, run.ctx.table_size
    games = run.summaries()
    groups = snake(run.bots, s.groups)
    if len(groups) == 1:
        return ranking(run.bots, games, k, tiebreaks=order_of(s), seeds=run.seeds)
    return _by_place(run, groups, games)


def _by_place(run: StageRun, groups: Sequence[Sequence[str]], games: Sequence[GameSummary]
              ) -> list[str]:
    """Group by group, then place by place across the groups."""
    k, s = run.ctx.table_size, run.stage
    points: dict[str, float] = defaultdict(float)
    played: dict[str, int] = defaultdict(int)
    for g in games:
        for i, b in enumerate(g.players):
            played[b] += 1
            if i in g.winners:
                points[b] += 1.0 / len(g.winners)
    seeds = run.seeds
    orders = []
    for members in groups:
        mine = [g for g in games if set(g.players) <= set(members)]
        orders.append(ranking(members, mine, k, tiebreaks=order_of(s), seeds=seeds))
    out: list[str] = []
    for place in range(max(len(o) for o in orders)):
        level = [o[place] for o in orders if place < len(o)]
        out += sorted(level, key=lambda b: (-points[b] / max(1, played[b]), seeds[b]))
    return out


def groups_of(run: StageRun) -> list[list[str]]:
    return snake(run.bots, run.stage.groups)
