"""What is read of a ladder from its store alone: its row, declaration, leaderboard and a
bot's page. :class:`~.ladders.Ladders` reads them so (it is one, and adds which bots are
connected to its referee); so does the organizer's worker process, which opens the same
database and has no referee (service/organizer_process.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..storage import SqlStore, Store
from ..storage.ladders import LadderGameRow, LadderRow
from .history import standings
from .leaderboard import Place, leaderboard
from .spec import LadderSpec, declared


@dataclass(frozen=True)
class Board:
    """A ladder's leaderboard as the organizer sees it."""

    ladder: LadderRow
    spec: LadderSpec
    places: list[Place]
    #: Bots with a stream on this referee now: name -> idle streams.
    connected: dict[str, int]


def ladder_store(store: Store) -> SqlStore:
    """The store's ladder rows (every backend's store has them)."""
    if not isinstance(store, SqlStore):
        raise TypeError(f"ladders need an SQL store, got {type(store).__name__}")
    return store


class LadderReads:
    """A ladder's row, leaderboard and bot pages, read from ``store`` (each a blocking
    read: call them in a worker thread). No bot is connected here (:meth:`connected`)."""

    def __init__(self, store: Store) -> None:
        self.store = ladder_store(store)

    def _ladder(self, lid: str) -> tuple[LadderRow, LadderSpec]:
        row = self.store.ladder(lid)
        if row is None:
            raise KeyError(lid)
        return row, declared(row.spec)

    def connected(self, bots: Iterable[str]) -> dict[str, int]:
        """Those of ``bots`` with a stream on this process now: name -> idle streams."""
        return {}

    def board(self, lid: str) -> Board:
        """The leaderboard of ``lid`` (KeyError: no such ladder). Reads the store."""
        row, spec = self._ladder(lid)
        rows = standings(self.store, lid, spec.k)
        return Board(row, spec, leaderboard(rows, spec.k),
                     self.connected(r.bot for r in rows))

    def bot_page(self, lid: str, bot: str, limit: int = 100
                 ) -> tuple[Board, Place | None, list[LadderGameRow]]:
        """The leaderboard, ``bot``'s place on it, and its newest ``limit`` games (KeyError:
        no such ladder). Reads the store."""
        board = self.board(lid)
        place = next((p for p in board.places if p.standing.bot == bot), None)
        return board, place, self.store.ladder_games(lid, bot=bot, limit=limit, newest_first=True)
