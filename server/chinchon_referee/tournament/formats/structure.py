"""A tournament's stages, rounds and bracket: as JSON (report.md, the exports, the web
view) and as sentences (``chinchon tournament check``): its plan's (:mod:`.chain`),
each stage's part its kind's (:mod:`.kinds`).

The JSON shape (``structure(spec, tid, stored)``; docs/tournaments.md documents it)::

    {"stages": [{"index": 0, "name": "Swiss", "kind": "swiss", "status": "playing",
                 "bots": [...seed order...], "seeding": "order", "advance": 8,
                 "most_games": 512, "games": 64, "tiebreaks": ["points", ...],
                 "ranking": null,
                 "rounds": [{"round": 1, "byes": [], "bye_points": 1.0, "tables": [
                     {"table": 1, "players": ["a", "b"], "points": [1.5, 0.5],
                      "games": ["t-1-g00000", "t-1-g00001"], "finished": true}]}]},
                {"index": 1, "kind": "knockout", "status": "not_started", "bots": [],
                 "bracket": {"size": 8, "matches": [
                     {"match": 0, "section": "winners", "round": 1, "slot": 1,
                      "a": "x", "b": null, "from": ["seed 1", "seed 8"],
                      "status": "walkover", "wins": [0, 0], "games": [],
                      "winner": "x", "loser": null, "decided_by": "walkover"}]}}],
     "ranking": null}

``status`` of a stage: ``not_started``, ``playing`` or ``over``; of a match: one of
:class:`.bracket.Status`. A round-robin stage has ``groups`` (lists of bots), a
gauntlet ``challengers`` and ``field``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...storage import GameRow
from .chain import plan_of, stored_games
from .spec import Declaration


def structure(spec: Declaration, tid: str, stored: Iterable[GameRow]) -> dict[str, Any]:
    """The JSON shape above, for tournament ``tid`` after the games ``stored``."""
    return plan_of(spec).structure(tid, stored_games(stored))


def describe(spec: Declaration) -> list[str]:
    """A line per stage: its format, size, rounds or bracket, and the most games it can
    take (``chinchon tournament check``)."""
    return plan_of(spec).describe()[1]
