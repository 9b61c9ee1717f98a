"""The gauntlet kind: each challenger plays every bot of the field (the other
participants); ranked challengers first."""

from __future__ import annotations

from typing import Any

from ... import tiebreaks as tb
from ...standings import Standings, compute
from ..games import Done, StageRun, StageStep
from ..spec import Context, FormatError, Kind, Stage
from ..stage_rr import AllAtOnce, rank_gauntlet
from .registry import order_of, register


@register
class GauntletKind(AllAtOnce):
    kind = Kind.GAUNTLET
    default_order = tb.GAUNTLET
    options = frozenset({"challengers", "games_per_pairing"})
    pairs_only = True

    def check(self, stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
        if i != 0:
            raise FormatError(f"{where}.kind: a gauntlet names its challengers, so it is the "
                              "first stage")
        if not stage.challengers:
            raise FormatError(f"{where}.challengers: a gauntlet needs at least one challenger")
        known = set(ctx.names)
        at = f"{where}.challengers"
        for b in stage.challengers:
            if b not in known:
                raise FormatError(f"{at}: {b!r} is not a participant")
        dup = sorted({b for b in stage.challengers if stage.challengers.count(b) > 1})
        if dup:
            raise FormatError(f"{at}: {', '.join(dup)} listed twice")
        if len(set(stage.challengers)) == len(ctx.names):
            raise FormatError(f"{at}: every participant is a challenger: a "
                              "gauntlet needs a field to play against")

    def span_and_most(self, stage: Stage, i: int, n: int, ctx: Context, seed: str | None
                      ) -> tuple[int, int]:
        c = len(set(stage.challengers))
        games = c * (n - c) * self.table_games(stage, ctx)
        return games, games

    def rank(self, run: StageRun) -> list[str]:
        return rank_gauntlet(run)

    def standings(self, run: StageRun, step: StageStep) -> Standings:
        st = compute(run.bots, run.summaries(), run.ctx.table_size,
                     tiebreaks=order_of(run.stage), seeds=run.seeds)
        st.reorder(step.ranking if isinstance(step, Done) else rank_gauntlet(run))
        return st

    def shape(self, run: StageRun) -> dict[str, Any]:
        first = set(run.stage.challengers)
        return {"challengers": list(run.stage.challengers),
                "field": [b for b in run.bots if b not in first]}

    def describe(self, stage: Stage, n: int, ctx: Context) -> str:
        c = len(stage.challengers)
        return (f"{c} challenger(s) against a field of {n - c}, "
                f"{self.table_games(stage, ctx)} games per pairing")
