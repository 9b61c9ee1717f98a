"""The knockout kind: a single-elimination bracket, with a match for 3rd place if
declared."""

from __future__ import annotations

from ... import tiebreaks as tb
from ..bracket import Node, single_elimination
from ..layout import bracket_size
from ..spec import Kind, Stage
from ..stage_bracket import Elimination
from .registry import register


@register
class KnockoutKind(Elimination):
    kind = Kind.KNOCKOUT
    default_order = tb.BRACKET
    options = frozenset({"match", "third_place"})

    def nodes(self, size: int, stage: Stage) -> list[Node]:
        return single_elimination(size, stage.third_place)

    def node_count(self, stage: Stage, n: int) -> int:
        return bracket_size(n) - 1 + int(stage.third_place)

    def match_count(self, stage: Stage, n: int) -> int:
        return n - 1 + int(stage.third_place and n >= 4)

    def extras(self, stage: Stage) -> list[str]:
        return ["a 3rd-place match"] if stage.third_place else []

