"""One set of standings per stage: each stage's bots over its own games, ranked as the
stage's kind ranks them (its tie-breaks; a Swiss's byes counted; a bracket by placement
first, a gauntlet's challengers first, groups place by place), what ``GetStandings``,
report.md and the web view show stage by stage."""

from __future__ import annotations

from collections.abc import Iterable

from ...storage import GameRow
from ..standings import Standings
from .chain import plan_of, stored_games
from .kinds.base import StageView
from .spec import Declaration

#: A stage's standings (its index, name, whether it is over).
StageStandings = StageView


def stage_standings(spec: Declaration, tid: str, stored: Iterable[GameRow]
                    ) -> list[StageStandings]:
    """The standings of every stage reached so far (a declaration without format: one)."""
    return plan_of(spec).stage_views(tid, stored_games(stored))


def overall(spec: Declaration, tid: str, stored: Iterable[GameRow]) -> Standings:
    """The tournament's standings over the games ``stored`` (formats/chain.py)."""
    return plan_of(spec).overall(tid, stored_games(stored))
