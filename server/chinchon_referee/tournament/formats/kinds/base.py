"""What a format kind is: the one interface every kind implements (:class:`FormatKind`,
a stage of one kind), and what a whole tournament's plan answers (:class:`Plan`: the
stage chain, or the round-robin of a declaration without ``format``).

Every kind owns its bounds, its place in the schedule, its next games, its standings,
its structure (JSON and words) and which bots it may still give games to; the code
above asks the kind (:func:`.registry.kind_of`) and never switches on ``Stage.kind``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ....storage import GameRow, Store
from ...standings import Standings
from ...tiebreaks import Tiebreak
from ..games import Create, NewGame, StageRun, StageStep, StoredGame, Wait
from ..spec import Context, Declaration, Format, Kind, Stage, rotation_games


class FormatKind(ABC):
    """One format kind: how a stage of it is checked, laid out, played, ranked and shown."""

    #: Its declared name (``kind = "..."``).
    kind: ClassVar[Kind]
    #: Its tie-break order when the stage declares none (:mod:`...tiebreaks`).
    default_order: ClassVar[tuple[Tiebreak, ...]]
    #: The stage fields only this kind reads (refused on the others).
    options: ClassVar[frozenset[str]] = frozenset()
    #: Played at tables of 2 only.
    pairs_only: ClassVar[bool] = False

    def order(self, stage: Stage) -> tuple[Tiebreak, ...]:
        """The tie-break order ``stage`` ranks by."""
        return stage.tiebreaks or self.default_order

    def table_games(self, stage: Stage, ctx: Context) -> int:
        """Games each table plays (whole seat rotations)."""
        return rotation_games(stage, ctx)

    def check(self, stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
        """FormatError naming the field if stage ``i`` of ``n`` bots cannot be played
        (the bounds every stage shares are checked by the chain)."""
        return None

    @abstractmethod
    def span_and_most(self, stage: Stage, i: int, n: int, ctx: Context, seed: str | None
                      ) -> tuple[int, int]:
        """The seq numbers stage ``i`` of ``n`` bots owns, and the most games it can take
        (``seed`` None: at least, before a seed is drawn)."""

    @abstractmethod
    def advance(self, run: StageRun) -> StageStep:
        """The stage's next step: games to create, to wait for, or its final ranking."""

    @abstractmethod
    def standings(self, run: StageRun, step: StageStep) -> Standings:
        """The stage's standings over its own games, in its order."""

    @abstractmethod
    def shape(self, run: StageRun) -> dict[str, Any]:
        """What the stage's JSON structure adds for this kind (rounds, bracket, groups)."""

    @abstractmethod
    def describe(self, stage: Stage, n: int, ctx: Context) -> str:
        """The stage in words (``chinchon tournament check``)."""

    def alive(self, run: StageRun, step: StageStep) -> tuple[str, ...]:
        """The bots the stage may still give games to (held: never dismissed meanwhile)."""
        return step.alive if isinstance(step, Wait) else run.bots

    def whole(self, spec: Declaration, ctx: Context) -> Plan | None:
        """The plan of the whole declaration, if this kind plays it itself (``spec``'s
        only stage is of this kind); None: it is a stage of a :class:`StageChain`."""
        return None


@dataclass(frozen=True)
class Over:
    """Every stage is over."""

    #: The final ranking, best first: the last stage's, then the bots each earlier
    #: stage did not pass on (later stages first).
    ranking: tuple[str, ...]


@dataclass(frozen=True)
class Next:
    """Games to create, or to wait for, in stage ``stage``."""

    step: Create | Wait
    stage: int


#: The answer of :meth:`Plan.next_games`.
Step = Next | Over


@dataclass(frozen=True)
class StageView:
    """One stage's standings as shown stage by stage."""

    index: int
    name: str
    over: bool
    standings: Standings


class Plan(ABC):
    """A whole tournament as its format plays it: the one road from a declaration to
    its games, standings and structure (the director, the service, the web view and
    the CLI take no other)."""

    #: Its whole schedule is stored when it is declared (and nothing asked again);
    #: otherwise its games are stored as they come due (director/planner.py).
    in_advance: ClassVar[bool] = False

    @abstractmethod
    def first_games(self, tid: str) -> Iterable[NewGame]:
        """The games stored when the tournament is declared."""

    @abstractmethod
    def next_games(self, tid: str, stored: Iterable[GameRow]) -> Step:
        """What the tournament needs next, after the games ``stored``."""

    @abstractmethod
    def stage_views(self, tid: str, games: Sequence[StoredGame]) -> list[StageView]:
        """The standings of every stage reached so far."""

    @abstractmethod
    def overall(self, tid: str, games: Sequence[StoredGame]) -> Standings:
        """The tournament's standings over the games stored."""

    @abstractmethod
    def alive(self, tid: str, games: Sequence[StoredGame]) -> tuple[str, ...]:
        """The bots that may still be given games (held: never dismissed meanwhile)."""

    @abstractmethod
    def standings(self, store: Store, tid: str) -> Standings:
        """The tournament's standings over the finished games stored."""

    @abstractmethod
    def structure(self, tid: str, games: Sequence[StoredGame]) -> dict[str, Any]:
        """Its stages, rounds and bracket as JSON (formats/structure.py's shape)."""

    @abstractmethod
    def report(self, store: Store, tid: str) -> tuple[Standings, dict[str, Any] | None]:
        """The standings and the structure report.md shows (None: none to show)."""

    @abstractmethod
    def stages(self, store: Store, tid: str
               ) -> tuple[Standings, list[StageView], dict[str, Any]]:
        """The standings, every stage's and the structure (``GetStandings``)."""

    @abstractmethod
    def shown(self, store: Store, tid: str
              ) -> tuple[dict[str, Any] | None, list[StageView], Standings | None]:
        """The structure, each stage's standings and the tournament's, as the web view
        shows a format ((None, [], None): nothing beside its plain standings)."""

    @abstractmethod
    def shown_format(self) -> Format | None:
        """The format as the organizer's views show it (None: a round-robin declared
        without one, which they show as the plain round-robin it is)."""

    @abstractmethod
    def check(self) -> None:
        """FormatError naming the field if the declaration cannot be played so (its
        bounds: formats/bounds.py)."""

    @abstractmethod
    def describe(self) -> tuple[str, list[str]]:
        """What ``chinchon tournament check`` says of it: a summary (after "valid.")
        and a line per stage (FormatError if it cannot be built)."""
