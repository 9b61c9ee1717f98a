"""One set of standings per stage: each stage's bots over its own games, ranked as the
stage ranks them (its tie-breaks; a Swiss's byes counted; a bracket by placement first,
a gauntlet's challengers first, groups place by place), what ``GetStandings``, report.md
and the web view show stage by stage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ...storage import GameRow
from ..model import TournamentSpec
from ..standings import Standings, compute
from . import stage_bracket, stage_rr, stage_swiss
from .games import Done, StageRun, StageStep, StoredGame
from .plan import stages
from .spec import BRACKETS, Kind, bye_points


@dataclass(frozen=True)
class StageStandings:
    index: int
    name: str
    over: bool
    standings: Standings


def stage_standings(spec: TournamentSpec, tid: str, stored: Iterable[GameRow]
                    ) -> list[StageStandings]:
    """The standings of every stage reached so far (the legacy round-robin: one)."""
    games = sorted((StoredGame.of(r) for r in stored), key=lambda g: g.seq)
    if spec.format.legacy:
        s = spec.format.stages[0]
        done = [g.summary for g in games if g.summary is not None]
        st = compute(spec.bots, done, spec.table_size, tiebreaks=s.order)
        return [StageStandings(0, s.title, bool(games) and all(g.finished for g in games), st)]
    return [StageStandings(run.index, run.stage.title, isinstance(step, Done), _of(run, step))
            for run, step in stages(spec, tid, games)]


def overall(spec: TournamentSpec, tid: str, stored: Iterable[GameRow]) -> Standings:
    """The tournament's standings: one stage's own; over several stages, every bot over
    every game, in the order of the final ranking (the last stage reached first, then
    the bots each earlier stage did not pass on), the first stage's tie-breaks."""
    rows = list(stored)
    per = stage_standings(spec, tid, rows)
    if len(spec.format.stages) == 1:
        return per[0].standings
    games = [g.summary for g in sorted((StoredGame.of(r) for r in rows), key=lambda g: g.seq)
             if g.summary is not None]
    st = compute(spec.bots, games, spec.table_size, tiebreaks=spec.format.stages[0].order)
    order: list[str] = []
    for stage in reversed(per):
        order += [r.bot for r in stage.standings.rows if r.bot not in set(order)]
    order += [r.bot for r in st.rows if r.bot not in set(order)]
    _reorder(st, order)
    return st


def _reorder(st: Standings, order: list[str]) -> None:
    """Rank ``st``'s rows in ``order`` (the ratings' order no more)."""
    if order == [r.bot for r in st.rows]:
        return
    by = {r.bot: r for r in st.rows}
    st.rows = [by[b] for b in order]
    for i, r in enumerate(st.rows):
        r.rank = i + 1
        r.p_better_than_next = None  # the order is not the ratings' any more


def _of(run: StageRun, step: StageStep) -> Standings:
    s, k = run.stage, run.ctx.table_size
    byes: Counter[str] = Counter()
    if s.kind is Kind.SWISS:
        byes = Counter(b for p in stage_swiss.played(run) for b in p.byes)
    st = compute(run.bots, run.summaries(), k, tiebreaks=s.order, byes=byes,
                 bye_points=bye_points(s, run.ctx) if s.kind is Kind.SWISS else 0.0,
                 seeds=run.seeds)
    if isinstance(step, Done):
        order = list(step.ranking)
    elif s.kind in BRACKETS:
        res, _ = stage_bracket.resolved(run)
        order = stage_bracket.rank(run, res)
    elif s.kind is Kind.GAUNTLET or s.groups > 1:
        order = stage_rr.rank(run)
    else:
        return st
    _reorder(st, order)
    return st
