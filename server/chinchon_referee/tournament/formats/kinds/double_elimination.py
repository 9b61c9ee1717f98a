"""The double-elimination kind: a winners' and a losers' bracket, a grand final and,
if the losers' side wins it, its reset."""

from __future__ import annotations

from ... import tiebreaks as tb
from ..bracket import Node, double_elimination
from ..layout import bracket_size
from ..spec import Kind, Stage
from ..stage_bracket import Elimination
from .registry import register


@register
class DoubleEliminationKind(Elimination):
    kind = Kind.DOUBLE_ELIMINATION
    default_order = tb.BRACKET
    options = frozenset({"match", "grand_final_reset"})
    double = True

    def nodes(self, size: int, stage: Stage) -> list[Node]:
        return double_elimination(size, stage.reset)

    def node_count(self, stage: Stage, n: int) -> int:
        p = bracket_size(n)
        return (p - 1) + (p - 2) + 1 + int(stage.reset)

    def match_count(self, stage: Stage, n: int) -> int:
        return 2 * n - 2 + int(stage.reset)

    def extras(self, stage: Stage) -> list[str]:
        return ["a grand final" + (" (reset if the losers' side wins it)" if stage.reset
                                   else "")]
