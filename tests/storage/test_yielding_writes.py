"""A large schedule written beside another writer of the same SQLite file (the organizer's
worker beside the referee): with ``yield_writes`` the write lock is left free between
its short transactions, so the other's write goes in while the schedule is still being
written, not after it (SQLite's lock has no queue: written back to back, the chunks
kept the other writer polling until the last one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from chinchon_referee.storage import SqliteStore

from tests.support.waits import until_sync

GAMES = 40_000


#: The organizer's worker, as another process: writes the schedule of GAMES games.
DECLARE = """
import sys
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.rows import GameRow, TournamentRow
from chinchon_referee.vocabulary import TournamentStatus
store = SqliteStore(sys.argv[1])
store.yield_writes = True
rows = [GameRow(f"t-big-{i}", "t-big", i, ["a", "b"], f"deal-{i}") for i in range(int(sys.argv[2]))]
store.create_tournament(TournamentRow("t-big", "big", {}, TournamentStatus.SCHEDULED, 1.0), rows)
store.close()
"""


def test_a_yielding_schedule_lets_another_writer_in_before_it_ends(tmp_path: Path) -> None:
    db = str(tmp_path / "db.sqlite3")
    referee = SqliteStore(db)
    maker = subprocess.Popen([sys.executable, "-c", DECLARE, db, str(GAMES)])

    def written() -> int:
        return len(referee._query("SELECT id FROM games WHERE tournament_id = 't-big'"))

    try:
        until_sync(lambda: written() > 0, "the schedule's first chunk", 60)
        # The referee's write: done while the schedule is still being written.
        assert referee.add_bot("writer", "0" * 64)
        assert written() < GAMES and referee.tournament("t-big") is None
        assert maker.wait(300) == 0
        assert referee.game_counts("t-big") == (GAMES, 0)
    finally:
        if maker.poll() is None:
            maker.kill()
            maker.wait()
        referee.close()
