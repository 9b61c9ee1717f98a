"""The Swiss kind: rounds paired by score (:mod:`..stage_swiss`), byes worth a fair
share of a table's games."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ... import tiebreaks as tb
from ...standings import Standings, compute
from ..games import Done, StageRun, StageStep
from ..layout import rounds_of
from ..spec import MAX_ROUNDS, Context, FormatError, Kind, Stage, max_rounds
from ..stage_swiss import advance, bye_points, played, table_games
from .base import FormatKind
from .registry import order_of, register


@register
class SwissKind(FormatKind):
    kind = Kind.SWISS
    default_order = tb.SWISS
    options = frozenset({"rounds", "bye_points", "games_per_pairing"})

    def table_games(self, stage: Stage, ctx: Context) -> int:
        return table_games(stage, ctx)

    def check(self, stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
        k = ctx.table_size
        if n < k:
            raise FormatError(f"{where}: {n} bots cannot fill a table of {k}")
        top = max_rounds(n, k)
        if stage.rounds is not None and not 1 <= stage.rounds <= top:
            why = " (more would repeat pairings)" if k == 2 and top < MAX_ROUNDS else ""
            raise FormatError(f"{where}.rounds: 1 to {top} for {n} bots{why}, got {stage.rounds}")
        most = table_games(stage, ctx)
        bp = stage.bye_points
        if bp is not None and not (math.isfinite(bp) and 0 <= bp <= most):
            raise FormatError(f"{where}.bye_points: 0 to {most} (the games of a table), got {bp}")

    def span_and_most(self, stage: Stage, i: int, n: int, ctx: Context, seed: str | None
                      ) -> tuple[int, int]:
        k = ctx.table_size
        games = rounds_of(stage, n, k) * (n // k) * table_games(stage, ctx)
        return games, games

    def advance(self, run: StageRun) -> StageStep:
        return advance(run)

    def standings(self, run: StageRun, step: StageStep) -> Standings:
        byes = Counter(b for p in played(run) for b in p.byes)
        st = compute(run.bots, run.summaries(), run.ctx.table_size,
                     tiebreaks=order_of(run.stage), byes=byes,
                     bye_points=bye_points(run.stage, run.ctx), seeds=run.seeds)
        if isinstance(step, Done):
            st.reorder(step.ranking)
        return st

    def shape(self, run: StageRun) -> dict[str, Any]:
        out = []
        for p in played(run):
            tables = []
            for t in sorted(p.tables):
                games = sorted(p.tables[t], key=lambda g: g.seq)
                players = list(games[0].players)
                points = dict.fromkeys(players, 0.0)
                for g in games:
                    if g.finished and not g.aborted:
                        for w in g.winners:
                            points[g.players[w]] += 1.0 / len(g.winners)
                tables.append({"table": t + 1, "players": players,
                               "points": [points[b] for b in players],
                               "games": [g.id for g in games],
                               "finished": all(g.finished for g in games)})
            out.append({"round": p.index + 1, "byes": p.byes, "tables": tables,
                        "bye_points": bye_points(run.stage, run.ctx)})
        return {"rounds": out}

    def describe(self, stage: Stage, n: int, ctx: Context) -> str:
        k = ctx.table_size
        r = rounds_of(stage, n, k)
        auto = " (automatic: log2 of the bots, rounded up, + 2)" if stage.rounds is None else ""
        bye = f", a bye worth {bye_points(stage, ctx):g}" if n % k else ""
        return (f"{r} rounds{auto} of {n // k} tables of {k}, {table_games(stage, ctx)} games "
                f"per table{bye}")
