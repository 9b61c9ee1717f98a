"""What a game is to be (GameSpec) and how it went (GameOutcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chinchon.engine import Outcome, RuleSet, Termination

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


#: A game record document: the JSON mapping of ``chinchon.v1.GameRecord``. The referee
#: only stores, sends and exports it; what it needs of the game's end it reads from
#: :attr:`GameOutcome.result`.
RecordDocument = dict[str, Any]


@dataclass
class GameOutcome:
    """How a game went: its result as types, its record, each seat's statistics."""

    spec: GameSpec
    result: Outcome
    record: RecordDocument
    stats: list[SeatStats]

    @property
    def termination(self) -> Termination:
        return self.result.termination

    @property
    def forfeited(self) -> int | None:
        return self.result.forfeited

    @property
    def winners(self) -> list[int]:
        return list(self.result.winners)
