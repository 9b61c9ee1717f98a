"""The round-robin kind: every table of the stage's bots (snaked over its ``groups``),
each with whole seat rotations; and the round-robin of a declaration without
``format``, whose whole schedule is made when it is declared (:class:`WholeRoundRobin`:
the same games, ids and deals as ever)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ....storage import GameRow, Store
from ... import tiebreaks as tb
from ...round_robin import MAX_TABLES, RoundRobin
from ...standings import Standings, compute, ranking, stored_standings
from ..games import Create, Done, NewGame, StageRun, StageStep, StoredGame, Wait, game_id
from ..layout import group_sizes, rr_tables, stage_seed
from ..spec import Context, Declaration, Format, FormatError, Kind, Stage
from ..stage_rr import AllAtOnce, groups_of, rank_groups
from .base import Next, Over, Plan, StageView, Step
from .registry import order_of, register


@register
class RoundRobinKind(AllAtOnce):
    kind = Kind.ROUND_ROBIN
    default_order = tb.ROUND_ROBIN
    options = frozenset({"groups", "games_per_pairing"})

    def check(self, stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
        k = ctx.table_size
        if n < k:
            raise FormatError(f"{where}: {n} bots cannot fill a table of {k}")
        if not 1 <= stage.groups <= n // k:
            raise FormatError(f"{where}.groups: 1 to {n // k} (each group needs {k} bots), "
                              f"got {stage.groups}")

    def span_and_most(self, stage: Stage, i: int, n: int, ctx: Context, seed: str | None
                      ) -> tuple[int, int]:
        tables = sum(rr_tables(size, ctx.table_size,
                               None if seed is None else stage_seed(seed, i, g))
                     for g, size in enumerate(group_sizes(n, stage.groups)))
        games = tables * self.table_games(stage, ctx)
        return games, games

    def rank(self, run: StageRun) -> list[str]:
        return rank_groups(run)

    def standings(self, run: StageRun, step: StageStep) -> Standings:
        st = compute(run.bots, run.summaries(), run.ctx.table_size,
                     tiebreaks=order_of(run.stage), seeds=run.seeds)
        if isinstance(step, Done):
            st.reorder(step.ranking)
        elif run.stage.groups > 1:
            st.reorder(rank_groups(run))
        return st

    def shape(self, run: StageRun) -> dict[str, Any]:
        return {"groups": groups_of(run)}

    def whole(self, spec: Declaration, ctx: Context) -> Plan | None:
        """A declaration without ``format`` (one round-robin stage, no option but its
        name) is played as the round-robin always was: :class:`WholeRoundRobin`."""
        return WholeRoundRobin(spec, ctx) if spec.format.legacy else None

    def describe(self, stage: Stage, n: int, ctx: Context) -> str:
        return ((f"{stage.groups} groups, " if stage.groups > 1 else "")
                + f"{self.table_games(stage, ctx)} games per table of {ctx.table_size}")


def too_many(games: int, n: int, k: int, per_table: int, most: int) -> str:
    return (f"games_per_pairing: the schedule would have {games:,} games ({n} participants, "
            f"table_size {k}, games_per_pairing {per_table}); at most {most:,}")


class WholeRoundRobin(Plan):
    """The round-robin of a declaration without ``format`` (one round-robin stage, no
    option but its name): its whole schedule made in advance, as it always was."""

    in_advance = True

    def __init__(self, spec: Declaration, ctx: Context) -> None:
        self.spec = spec
        self.ctx = ctx
        self.stage = spec.format.stages[0]

    def check(self) -> None:
        """FormatError if the schedule is surely too large, before building it: at
        least this many tables (all the k-subsets, or enough for every pair to meet),
        each with whole rotations."""
        ctx = self.ctx
        bots, k = len(ctx.names), ctx.table_size
        tables = math.comb(bots, k)
        if tables > MAX_TABLES:
            tables = max(math.ceil(math.comb(bots, 2) / math.comb(k, 2)), math.ceil(bots / k))
        games = tables * math.ceil(ctx.games_per_pairing / k) * k
        if games > ctx.max_games:
            raise FormatError(too_many(games, bots, k, ctx.games_per_pairing, ctx.max_games))

    def schedule(self, tag: str) -> RoundRobin:
        """The schedule, refused (FormatError) if larger than the bound."""
        s = self.spec
        rr = RoundRobin(s.bots, s.table_size, s.games_per_pairing, s.seed,
                        duplicate=s.duplicate_deals, tag=tag)
        if len(rr) > self.ctx.max_games:
            raise FormatError(too_many(len(rr), len(s.bots), s.table_size,
                                       s.games_per_pairing, self.ctx.max_games))
        return rr

    def _games(self, tid: str, rr: RoundRobin) -> Iterator[NewGame]:
        per_step = len(rr.tables) * self.spec.table_size
        return (NewGame(p.seq, game_id(tid, p.seq), p.players, p.deal_id, 0,
                        p.seq // per_step + 1) for p in rr)

    def first_games(self, tid: str) -> Iterable[NewGame]:
        """The whole schedule (a generator: 100,000 games are not held at once)."""
        return self._games(tid, self.schedule(tid))

    def next_games(self, tid: str, stored: Iterable[GameRow]) -> Step:
        games = sorted((StoredGame.of(r) for r in stored), key=lambda g: g.seq)
        rr = self.schedule(tid)
        if len(games) < len(rr):
            have = {g.seq for g in games}
            todo = tuple(g for g in self._games(tid, rr) if g.seq not in have)
            if todo:
                return Next(Create(todo), 0)
        if not all(g.finished for g in games):
            return Next(Wait(tuple(g.id for g in games if not g.finished),
                             tuple(self.spec.bots)), 0)
        return Over(tuple(self._ranking(games)))

    def _ranking(self, games: Sequence[StoredGame]) -> list[str]:
        done = [g.summary for g in games if g.summary is not None]
        return ranking(self.spec.bots, done, self.spec.table_size,
                       tiebreaks=order_of(self.stage))

    def stage_views(self, tid: str, games: Sequence[StoredGame]) -> list[StageView]:
        done = [g.summary for g in games if g.summary is not None]
        st = compute(self.spec.bots, done, self.spec.table_size,
                     tiebreaks=order_of(self.stage))
        return [StageView(0, self.stage.title, bool(games) and all(g.finished for g in games),
                          st)]

    def overall(self, tid: str, games: Sequence[StoredGame]) -> Standings:
        return self.stage_views(tid, games)[0].standings

    def alive(self, tid: str, games: Sequence[StoredGame]) -> tuple[str, ...]:
        return tuple(self.spec.bots)

    def standings(self, store: Store, tid: str) -> Standings:
        """Counted by the store (the rows are not read one by one)."""
        return stored_standings(store, tid, self.spec.bots, self.spec.table_size)

    def _progress(self, tid: str, games: Sequence[StoredGame]) -> tuple[int, bool]:
        """Its games in all, and whether they are all stored and finished."""
        total = len(self.schedule(tid))
        return total, len(games) >= total and all(g.finished for g in games)

    def structure(self, tid: str, games: Sequence[StoredGame]) -> dict[str, Any]:
        return self._structure(games, *self._progress(tid, games))

    def _structure(self, games: Sequence[StoredGame], total: int, over: bool
                   ) -> dict[str, Any]:
        s = self.stage
        ranking_ = self._ranking(games) if over else None
        return {"stages": [{
            "index": 0, "name": s.title, "kind": s.kind.value,
            "status": "over" if over else "playing" if games else "not_started",
            "bots": list(self.spec.bots), "seeding": s.seeding_for(0).value, "advance": None,
            "most_games": total, "games": len(games),
            "tiebreaks": [t.value for t in order_of(s)],
            "ranking": ranking_, "groups": [list(self.spec.bots)]}], "ranking": ranking_}

    def report(self, store: Store, tid: str) -> tuple[Standings, dict[str, Any] | None]:
        return self.standings(store, tid), None

    def stages(self, store: Store, tid: str
               ) -> tuple[Standings, list[StageView], dict[str, Any]]:
        st = self.standings(store, tid)
        games = sorted((StoredGame.of(r) for r in store.schedule(tid)), key=lambda g: g.seq)
        total, over = self._progress(tid, games)
        return (st, [StageView(0, self.stage.title, over, st)],
                self._structure(games, total, over))

    def shown(self, store: Store, tid: str
              ) -> tuple[dict[str, Any] | None, list[StageView], Standings | None]:
        return None, [], None

    def shown_format(self) -> Format | None:
        return None

    def describe(self) -> tuple[str, list[str]]:
        rr = self.schedule("check")
        return (f"{len(self.spec.participants)} bots, {len(rr.tables)} tables of "
                f"{self.spec.table_size}, {rr.games_per_table} games per table, "
                f"{len(rr)} games"), []
