"""The stage chain: a tournament's stages, each played as its kind plays it
(:mod:`.kinds`), the bots each passes on seeding the next; and :func:`plan_of`, the
one road from a declaration to its games, standings and structure.

A declaration without ``format`` is the round-robin kind's whole-tournament plan
(:class:`.kinds.round_robin.WholeRoundRobin`: its schedule made in advance, with the
ids and deals it always had); every other one is a :class:`StageChain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from ...storage import GameRow, Store
from ..standings import Standings, compute
from . import bounds
from .games import Create, Done, NewGame, StageRun, StageStep, StoredGame
from .kinds import catalog  # noqa: F401  (registers every kind)
from .kinds.base import Next, Over, Plan, StageView, Step
from .kinds.registry import kind_of, order_of
from .layout import StageLayout
from .seeding import seeded
from .spec import Context, Declaration, Format, FormatError, context, sizes


def layout(fmt: Format, ctx: Context, seed: str) -> tuple[StageLayout, ...]:
    """Each stage's place in the schedule, for a tournament of this seed."""
    out = []
    base = 0
    for i, (s, n) in enumerate(zip(fmt.stages, sizes(fmt, len(ctx.names)), strict=True)):
        span, most = kind_of(s).span_and_most(s, i, n, ctx, seed)
        out.append(StageLayout(i, s, n, base, span, most))
        base += span
    return tuple(out)


@lru_cache(maxsize=32)
def layout_of(spec: Declaration) -> tuple[StageLayout, ...]:
    return layout(spec.format, context(spec), spec.seed)


def stored_games(stored: Iterable[GameRow]) -> list[StoredGame]:
    return sorted((StoredGame.of(r) for r in stored), key=lambda g: g.seq)


def stages(spec: Declaration, tid: str, games: Sequence[StoredGame]
           ) -> list[tuple[StageRun, StageStep]]:
    """Every stage reached so far with its step: all Done but the last (unless over)."""
    lay = layout_of(spec)
    owner = [next((s.index for s in lay if s.owns(g.seq)), None) for g in games]
    stray = [g.id for g, o in zip(games, owner, strict=True) if o is None]
    if stray:
        raise ValueError(f"games {', '.join(stray[:3])} belong to no stage of this format")
    ctx = context(spec)
    bots = seeded(lay[0].stage, 0, spec.bots, spec.bots, ctx.ratings, spec.seed)
    out: list[tuple[StageRun, StageStep]] = []
    for s in lay:
        mine = tuple(g for g, o in zip(games, owner, strict=True) if o == s.index)
        run = StageRun(tid, spec.seed, ctx, s, tuple(bots), mine)
        step = kind_of(s.stage).advance(run)
        out.append((run, step))
        if not isinstance(step, Done) or s.index == len(lay) - 1:
            break
        nxt = lay[s.index + 1]
        bots = seeded(nxt.stage, nxt.index, step.ranking[:s.stage.advance or 0], spec.bots,
                      ctx.ratings, spec.seed)
    return out


def final(rankings: Sequence[Done]) -> tuple[str, ...]:
    """The final ranking from every stage's (all over)."""
    out = list(rankings[-1].ranking)
    for done in reversed(rankings[:-1]):
        out += [b for b in done.ranking if b not in set(out)]
    return tuple(out)


class StageChain(Plan):
    """A declared format: its stages in a chain, each asked of its kind."""

    def __init__(self, spec: Declaration) -> None:
        self.spec = spec

    def first_games(self, tid: str) -> Iterable[NewGame]:
        step = self.next_games(tid, [])
        if not isinstance(step, Next) or not isinstance(step.step, Create):
            raise ValueError("format: its first stage asks for no game")
        return step.step.games

    def next_games(self, tid: str, stored: Iterable[GameRow]) -> Step:
        runs = stages(self.spec, tid, stored_games(stored))
        last = runs[-1]
        step = last[1]
        if isinstance(step, Done):
            return Over(final([s for _, s in runs if isinstance(s, Done)]))
        return Next(step, last[0].index)

    def alive(self, tid: str, games: Sequence[StoredGame]) -> tuple[str, ...]:
        """The bots of the stage being played that may still be given games in it."""
        run, step = stages(self.spec, tid, games)[-1]
        return kind_of(run.stage).alive(run, step)

    def stage_views(self, tid: str, games: Sequence[StoredGame]) -> list[StageView]:
        return [StageView(run.index, run.stage.title, isinstance(step, Done),
                          kind_of(run.stage).standings(run, step))
                for run, step in stages(self.spec, tid, games)]

    def overall(self, tid: str, games: Sequence[StoredGame]) -> Standings:
        """One stage's own standings; over several stages, every bot over every game,
        in the order of the final ranking (the last stage reached first, then the bots
        each earlier stage did not pass on), the first stage's tie-breaks."""
        spec = self.spec
        per = self.stage_views(tid, games)
        if len(spec.format.stages) == 1:
            return per[0].standings
        st = compute(spec.bots, [g.summary for g in games if g.summary is not None],
                     spec.table_size, tiebreaks=order_of(spec.format.stages[0]))
        order: list[str] = []
        for stage in reversed(per):
            order += [r.bot for r in stage.standings.rows if r.bot not in set(order)]
        order += [r.bot for r in st.rows if r.bot not in set(order)]
        st.reorder(order)
        return st

    def standings(self, store: Store, tid: str) -> Standings:
        return self.overall(tid, stored_games(store.schedule(tid)))

    def structure(self, tid: str, games: Sequence[StoredGame]) -> dict[str, Any]:
        runs = stages(self.spec, tid, games)
        out = []
        for lay in layout_of(self.spec):
            reached = next(((r, s) for r, s in runs if r.index == lay.index), None)
            out.append(_stage(lay, reached))
        done = [s for _, s in runs if isinstance(s, Done)]
        over = len(done) == len(self.spec.format.stages)
        return {"stages": out, "ranking": list(final(done)) if over else None}

    def report(self, store: Store, tid: str) -> tuple[Standings, dict[str, Any] | None]:
        games = stored_games(store.schedule(tid))
        return self.overall(tid, games), self.structure(tid, games)

    def stages(self, store: Store, tid: str
               ) -> tuple[Standings, list[StageView], dict[str, Any]]:
        games = stored_games(store.schedule(tid))
        return (self.overall(tid, games), self.stage_views(tid, games),
                self.structure(tid, games))

    def shown(self, store: Store, tid: str
              ) -> tuple[dict[str, Any] | None, list[StageView], Standings | None]:
        games = stored_games(store.schedule(tid))
        return (self.structure(tid, games), self.stage_views(tid, games),
                self.overall(tid, games))

    def shown_format(self) -> Format | None:
        return self.spec.format

    def check(self) -> None:
        bounds.check(self.spec.format, context(self.spec))

    def describe(self) -> tuple[str, list[str]]:
        ctx = context(self.spec)
        lines = []
        lays = layout_of(self.spec)
        for lay in lays:
            s = lay.stage
            lines.append(f"stage {lay.index + 1}, {s.title}: {lay.size} bots, "
                         f"{kind_of(s).describe(s, lay.size, ctx)}; at most {lay.most:,} games"
                         + (f"; the top {s.advance} go on" if s.advance else ""))
        most = sum(lay.most for lay in lays)
        return (f"{len(self.spec.participants)} bots, {len(lines)} "
                f"stage{'s' if len(lines) > 1 else ''}, at most {most:,} games"), lines


def _stage(lay: StageLayout, reached: tuple[StageRun, StageStep] | None) -> dict[str, Any]:
    s = lay.stage
    d: dict[str, Any] = {
        "index": lay.index, "name": s.title, "kind": s.kind.value,
        "status": "not_started", "bots": [], "seeding": s.seeding_for(lay.index).value,
        "advance": s.advance, "most_games": lay.most, "games": 0,
        "tiebreaks": [t.value for t in order_of(s)], "ranking": None,
    }
    if reached is None:
        return d
    run, step = reached
    d.update(status="over" if isinstance(step, Done) else "playing", bots=list(run.bots),
             games=len(run.games), ranking=list(step.ranking) if isinstance(step, Done) else None)
    d.update(kind_of(s).shape(run))
    return d


@lru_cache(maxsize=32)
def plan_of(spec: Declaration) -> Plan:
    """The plan of a declaration: its first stage's kind's, if that kind plays the
    whole declaration itself (the round-robin of a declaration without ``format``),
    else its stage chain."""
    return kind_of(spec.format.stages[0]).whole(spec, context(spec)) or StageChain(spec)


__all__ = ["FormatError", "Next", "Over", "Plan", "StageChain", "StageView", "Step",
           "final", "layout", "layout_of", "plan_of", "stages"]
