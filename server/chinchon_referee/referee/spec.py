"""What a game is to be (GameSpec) and how it went (GameOutcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chinchon.engine import RuleSet, Termination

from ..config import Policies, TimeControl
from .seats import SeatStats


@dataclass
class GameSpec:
    game_id: str
    rules: RuleSet
    players: list[str]  # bot names by seat (house bots: "house:<kind>")
    seed: bytes | str
    deal_id: str
    time_control: TimeControl
    policies: Policies
    tournament_id: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    send_record: bool = False
    #: The suit relabelling of the deal (twins of a duplicate deal: distinct indices).
    relabel: int | None = None


@dataclass
class GameOutcome:
    spec: GameSpec
    record: dict[str, Any]
    stats: list[SeatStats]
    termination: Termination
    forfeited: int | None
    winners: list[int]
