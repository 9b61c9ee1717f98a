"""What is read of a tournament from its store alone: its declaration, its counts, its
standings and stages. The director reads them so (it is one); so does the organizer's
worker process, which opens the same database and has no director (service/organizer_process.py)."""

from __future__ import annotations

from typing import Any

from ..storage import Store
from ..tournament.formats.stage_standings import StageStandings, overall, stage_standings
from ..tournament.formats.structure import structure
from ..tournament.model import TournamentSpec, declared
from ..tournament.standings import Standings, stored_standings


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
        spec = self.spec_of(tid)
        if spec.format.legacy:
            return stored_standings(self.store, tid, spec.bots, spec.table_size)
        return overall(spec, tid, self.store.schedule(tid))

    def report_parts(self, tid: str) -> tuple[Standings, dict[str, Any] | None]:
        """The standings and, for a format, its structure (None for a round-robin
        declared without one): what the report shows."""
        spec = self.spec_of(tid)
        if spec.format.legacy:
            return stored_standings(self.store, tid, spec.bots, spec.table_size), None
        games = self.store.schedule(tid)
        return overall(spec, tid, games), structure(spec, tid, games)

    def stages(self, tid: str) -> tuple[Standings, list[StageStandings], dict[str, Any]]:
        """The standings, every stage's standings and the stages' structure (rounds,
        bracket: formats/structure.py's JSON shape), over the games stored (seconds for
        a large tournament)."""
        spec = self.spec_of(tid)
        if spec.format.legacy:
            st = stored_standings(self.store, tid, spec.bots, spec.table_size)
            shape = structure(spec, tid, self.store.schedule(tid))
            over = shape["stages"][0]["status"] == "over"
            return st, [StageStandings(0, spec.format.stages[0].title, over, st)], shape
        games = self.store.schedule(tid)
        return (overall(spec, tid, games), stage_standings(spec, tid, games),
                structure(spec, tid, games))
