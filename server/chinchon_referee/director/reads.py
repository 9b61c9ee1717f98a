"""What is read of a tournament from its store alone: its declaration, its counts, its
standings and stages. The director reads them so (it is one); so does the organizer's
worker process, which opens the same database and has no director (service/organizer_process.py)."""

from __future__ import annotations

from typing import Any

from ..storage import Store
from ..tournament.formats.chain import plan_of
from ..tournament.formats.stage_standings import StageStandings
from ..tournament.model import TournamentSpec, declared
from ..tournament.standings import Standings


class TournamentReads:
    """A tournament's declaration, counts, standings and stages, read from ``store``
    (each a blocking read: call them in a worker thread)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def spec_of(self, tid: str) -> TournamentSpec:
        row = self.store.tournament(tid)
        if row is None:
            raise KeyError(tid)
        return declared(row.spec)

    def counts(self, tid: str) -> tuple[int, int]:
        """(games in the schedule, games finished), counted by the store (no rows read)."""
        return self.store.game_counts(tid)

    def standings(self, tid: str) -> Standings:
        """The standings over the finished games (seconds for a large tournament)."""
        return plan_of(self.spec_of(tid)).standings(self.store, tid)

    def report_parts(self, tid: str) -> tuple[Standings, dict[str, Any] | None]:
        """The standings and, for a format, its structure (None for a round-robin
        declared without one): what the report shows."""
        return plan_of(self.spec_of(tid)).report(self.store, tid)

    def stages(self, tid: str) -> tuple[Standings, list[StageStandings], dict[str, Any]]:
        """The standings, every stage's standings and the stages' structure (rounds,
        bracket: formats/structure.py's JSON shape), over the games stored (seconds for
        a large tournament)."""
        return plan_of(self.spec_of(tid)).stages(self.store, tid)
