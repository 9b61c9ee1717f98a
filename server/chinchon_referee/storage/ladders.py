"""The standing ladders' rows: a mixin of :class:`~.sql.SqlStore`.

Three tables (storage/schema.py): ``ladders`` (the declaration, its status, and
``rated``, the number of rating updates so far), ``ladder_entrants`` (each entrant's
rating, mu and sigma, the rating it started from, its games and wins) and
``ladder_games`` (each game seated: its players, result, record, and the ratings of its
players after it).

A game's result and its rating update are one transaction (:meth:`finish_ladder_game`):
the game is marked finished only if it was running, the ladder's row is updated first
(``rated`` + 1: the update's number, and in PostgreSQL the row lock that serializes
the ladder's updates, whichever process plays the game), then its players' ratings are
read, updated by the caller's function and written. So each finished game updates the
ratings exactly once, and the ratings are always those a replay of the finished games in
``rated`` order gives (:meth:`ladder_games`).
"""

from __future__ import annotations

import contextlib
import enum
import json
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chinchon.engine import Outcome

from .rows import pack_record, record_of, result_json, result_of

#: A rating update: the players' (mu, sigma) by seat and their places -> after.
Rate = Callable[[Sequence[tuple[float, float]], Sequence[int]], Sequence[tuple[float, float]]]


class LadderStatus(enum.StrEnum):
    OPEN = "open"
    PAUSED = "paused"
    CLOSED = "closed"


class LadderGameStatus(enum.StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    #: Stopped without a result (the referee stopped, or aborted it): rated never.
    VOID = "void"


@dataclass
class LadderRow:
    id: str
    name: str
    spec: dict[str, Any]
    status: LadderStatus
    created: float
    rated: int = 0


@dataclass
class EntrantRow:
    bot: str
    mu: float
    sigma: float
    start_mu: float
    start_sigma: float
    games: int = 0
    wins: float = 0.0
    last_game: float | None = None
    joined: float = 0.0
    removed: bool = False
    inherits: str = ""
    #: Its games forfeited on time in a row, the newest back (0 after any other end).
    time_forfeits: int = 0
    #: When the last of its games forfeited on time ended (None: none yet).
    last_time_forfeit: float | None = None
    #: Since when it is suspended (not seated) for its forfeits on time; None: it is not.
    suspended: float | None = None


@dataclass
class LadderGameRow:
    id: str
    ladder_id: str
    players: list[str]
    status: LadderGameStatus
    started: float
    finished: float | None = None
    #: The rating update's number in its ladder (1, 2, ...), None if not rated.
    rated: int | None = None
    result: Outcome | None = None
    places: list[int] | None = None
    #: The players' (mu, sigma) after the game, by seat.
    ratings: list[tuple[float, float]] | None = None
    stats: list[dict[str, Any]] | None = None
    record: dict[str, Any] | None = None
    #: The players this game suspended (as :meth:`LadderRows.finish_ladder_game` wrote
    #: it; None when the row was read back).
    suspended: list[str] | None = None


_GAME = "id, ladder_id, players, status, started, finished, rated, result, places, ratings, stats"
_ENTRANT = ("bot, mu, sigma, start_mu, start_sigma, games, wins, last_game, joined, removed, "
            "inherits, time_forfeits, last_time_forfeit, suspended")


class LadderRows:
    #: The database's clock as SQL (sql.SqlStore's, by backend).
    NOW: str

    @abstractmethod
    def _tx(self) -> contextlib.AbstractContextManager[Any]: ...

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    # ladders -------------------------------------------------------------------------
    def create_ladder(self, row: LadderRow) -> None:
        with self._tx() as c:
            c.execute("INSERT INTO ladders (id, name, spec, status, created, rated) "
                      "VALUES (?, ?, ?, ?, ?, 0)",
                      (row.id, row.name, json.dumps(row.spec), row.status.value, row.created))

    def ladder(self, lid: str) -> LadderRow | None:
        rows = self._query("SELECT id, name, spec, status, created, rated FROM ladders "
                           "WHERE id = ?", (lid,))
        return _ladder(rows[0]) if rows else None

    def ladders(self) -> list[LadderRow]:
        return [_ladder(r) for r in self._query(
            "SELECT id, name, spec, status, created, rated FROM ladders ORDER BY created, id")]

    def set_ladder_status(self, lid: str, status: LadderStatus) -> bool:
        """False if it had that status already, or is closed (a closed ladder stays so)."""
        with self._tx() as c:
            return bool(c.execute(
                "UPDATE ladders SET status = ? WHERE id = ? AND status != ? AND status != ?",
                (status.value, lid, status.value, LadderStatus.CLOSED.value)).rowcount)

    # entrants ------------------------------------------------------------------------
    def enter_ladder(self, lid: str, bot: str, start: tuple[float, float],
                     inherits: str = "") -> bool:
        """Enter ``bot`` from rating ``start``; a removed entrant comes back with the rating
        it had. False if it was entered already."""
        with self._tx() as c:
            if c.execute("UPDATE ladder_entrants SET removed = 0 WHERE id = ? AND removed = 1",
                         (f"{lid}/{bot}",)).rowcount:
                return True
            return bool(c.execute(
                "INSERT INTO ladder_entrants (id, ladder_id, bot, mu, sigma, start_mu, "
                "start_sigma, games, wins, joined, removed, inherits) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, 0, ?) ON CONFLICT DO NOTHING",
                (f"{lid}/{bot}", lid, bot, start[0], start[1], start[0], start[1], time.time(),
                 inherits)).rowcount)

    def lift_suspension(self, lid: str, bot: str, before: float | None = None) -> bool:
        """Seat ``bot`` again: its suspension is lifted (if it began before ``before``,
        when given: a stream opened then is a sign of life since). Its count of forfeits
        on time in a row stays until it ends a game otherwise. False if it was not
        suspended (so)."""
        sql = "UPDATE ladder_entrants SET suspended = NULL WHERE id = ? AND suspended IS NOT NULL"
        args: list[Any] = [f"{lid}/{bot}"]
        if before is not None:
            sql += " AND suspended < ?"
            args.append(before)
        with self._tx() as c:
            return bool(c.execute(sql, args).rowcount)

    def remove_entrant(self, lid: str, bot: str) -> bool:
        """Take ``bot`` off the ladder (its games and rating stay); False if not entered."""
        with self._tx() as c:
            return bool(c.execute("UPDATE ladder_entrants SET removed = 1 WHERE id = ? AND "
                                  "removed = 0", (f"{lid}/{bot}",)).rowcount)

    def entrants(self, lid: str) -> list[EntrantRow]:
        return [EntrantRow(r[0], float(r[1]), float(r[2]), float(r[3]), float(r[4]), int(r[5]),
                           float(r[6]), r[7], float(r[8]), bool(r[9]), str(r[10]), int(r[11]),
                           _real(r[12]), _real(r[13]))
                for r in self._query(f"SELECT {_ENTRANT} FROM ladder_entrants WHERE "
                                     "ladder_id = ? ORDER BY bot", (lid,))]

    # games ---------------------------------------------------------------------------
    def begin_ladder_game(self, lid: str, gid: str, players: Sequence[str],
                          owner: str | None = None, lease: float = 0.0) -> set[str]:
        """Write the game ``gid`` of ``lid`` running, unless one of its ``players`` is at a
        running game of ``lid`` already (seated by another process sharing the database):
        the players found busy (nothing written), or an empty set (begun). The check and
        the write are one transaction that holds the ladder's row (in PostgreSQL, its row
        lock; SQLite writes one transaction at a time), so two processes never seat one
        bot at two tables of a ladder at once. ``owner``: the process playing it, with a
        lease of ``lease`` seconds (renewed by :meth:`renew_leases`)."""
        with self._tx() as c:
            if not c.execute("UPDATE ladders SET rated = rated WHERE id = ?", (lid,)).rowcount:
                raise KeyError(lid)
            busy = {str(b) for (ps,) in c.execute(
                "SELECT players FROM ladder_games WHERE ladder_id = ? AND status = 'running'",
                (lid,)).fetchall() for b in json.loads(ps)} & set(players)
            if busy:
                return busy
            lease_sql = "NULL" if owner is None else f"{self.NOW} + ?"
            c.execute("INSERT INTO ladder_games (id, ladder_id, players, status, owner, started, "
                      f"lease_until) VALUES (?, ?, ?, 'running', ?, ?, {lease_sql})",
                      (gid, lid, json.dumps(list(players)), owner, time.time(),
                       *(() if owner is None else (lease,))))
        return set()

    def busy_ladder_bots(self, lid: str) -> dict[str, str | None]:
        """The bots at a running game of ``lid`` now, and the process playing each."""
        return {str(b): None if o is None else str(o) for ps, o in self._query(
            "SELECT players, owner FROM ladder_games WHERE ladder_id = ? AND "
            "status = 'running'", (lid,)) for b in json.loads(ps)}

    def renew_ladder_leases(self, owner: str, lease: float) -> int:
        """Extend the leases of every ladder game ``owner`` is playing; how many."""
        with self._tx() as c:
            return int(c.execute(
                f"UPDATE ladder_games SET lease_until = {self.NOW} + ? WHERE owner = ? AND "
                "status = 'running'", (lease, owner)).rowcount)

    def void_expired_ladder_games(self, grace: float = 0.0) -> int:
        """Set void (never rated) the running ladder games whose lease ran out more than
        ``grace`` seconds ago: their process died or lost the database. Their bots are
        seated again by whichever process has their streams; a late result for such a
        game is refused (:meth:`finish_ladder_game` writes only a running game)."""
        with self._tx() as c:
            return int(c.execute(
                "UPDATE ladder_games SET status = 'void', lease_until = NULL WHERE "
                f"status = 'running' AND lease_until < {self.NOW} - ?", (grace,)).rowcount)

    def finish_ladder_game(self, gid: str, result: Outcome, places: Sequence[int] | None,
                           stats: list[dict[str, Any]], record: dict[str, Any] | None,
                           rate: Rate, on_time: Sequence[int] = (),
                           suspend_after: int = 0) -> LadderGameRow | None:
        """Store a game's end and, unless ``places`` is None (it does not count: it is
        voided), its rating update, in one transaction; the game's row as stored, or None
        if it was not running (finished or voided already: nothing is written).

        With the rating, each player's health: the seats ``on_time`` forfeited the game
        on time (their count of such forfeits in a row grows; every other player's is
        back to 0); a player whose count reaches ``suspend_after`` (0: never) is
        suspended from now (the row's ``suspended``)."""
        z, size = pack_record(record)
        now = time.time()
        with self._tx() as c:
            found = c.execute("SELECT ladder_id, players FROM ladder_games WHERE id = ? AND "
                              "status = 'running'", (gid,)).fetchall()
            if not found:
                return None
            lid, players = str(found[0][0]), list(json.loads(found[0][1]))
            if places is None:
                c.execute("UPDATE ladder_games SET status = 'void', lease_until = NULL, "
                          "finished = ?, result = ?, "
                          "stats = ?, record_z = ?, record_size = ? WHERE id = ?",
                          (now, result_json(result), json.dumps(stats), z, size, gid))
                return LadderGameRow(gid, lid, players, LadderGameStatus.VOID, now, now)
            if not c.execute("UPDATE ladder_games SET status = 'finished' WHERE id = ? AND "
                             "status = 'running'", (gid,)).rowcount:
                return None
            (n,), = c.execute("UPDATE ladders SET rated = rated + 1 WHERE id = ? RETURNING rated",
                              (lid,)).fetchall()
            after = self._rate(c, lid, players, places, rate, now)
            suspended = self._health(c, lid, players, set(on_time), suspend_after, now)
            c.execute("UPDATE ladder_games SET lease_until = NULL, finished = ?, rated = ?, "
                      "result = ?, places = ?, "
                      "ratings = ?, stats = ?, record_z = ?, record_size = ? WHERE id = ?",
                      (now, n, result_json(result), json.dumps(list(places)),
                       json.dumps([list(r) for r in after]), json.dumps(stats), z, size, gid))
        return LadderGameRow(gid, lid, players, LadderGameStatus.FINISHED, now, now, int(n),
                             result, list(places), list(after), stats, suspended=suspended)

    @staticmethod
    def _health(c: Any, lid: str, players: list[str], on_time: set[int], suspend_after: int,
                now: float) -> list[str]:
        """Each player's forfeits on time in a row after the game (in ``c``); the players
        it suspends."""
        suspended = []
        for i, p in enumerate(players):
            key = f"{lid}/{p}"
            if i not in on_time:
                c.execute("UPDATE ladder_entrants SET time_forfeits = 0 WHERE id = ?", (key,))
                continue
            (streak,), = c.execute(
                "UPDATE ladder_entrants SET time_forfeits = time_forfeits + 1, "
                "last_time_forfeit = ? WHERE id = ? RETURNING time_forfeits",
                (now, key)).fetchall()
            if suspend_after and int(streak) >= suspend_after and c.execute(
                    "UPDATE ladder_entrants SET suspended = ? WHERE id = ? AND suspended IS NULL",
                    (now, key)).rowcount:
                suspended.append(p)
        return suspended

    @staticmethod
    def _rate(c: Any, lid: str, players: list[str], places: Sequence[int], rate: Rate,
              now: float) -> list[tuple[float, float]]:
        """The players' ratings read, updated by ``rate``, written back (in ``c``)."""
        have = {str(b): (float(mu), float(s)) for b, mu, s in c.execute(
            "SELECT bot, mu, sigma FROM ladder_entrants WHERE ladder_id = ? AND bot IN "
            f"({', '.join('?' * len(players))})", (lid, *players)).fetchall()}
        before = [have[p] for p in players]  # KeyError: a player never entered
        after = [(float(m), float(s)) for m, s in rate(before, places)]
        winners = [i for i, p in enumerate(places) if p == 0]
        for i, (p, (mu, sigma)) in enumerate(zip(players, after, strict=True)):
            won = 1.0 / len(winners) if i in winners else 0.0
            c.execute("UPDATE ladder_entrants SET mu = ?, sigma = ?, games = games + 1, "
                      "wins = wins + ?, last_game = ? WHERE id = ?",
                      (mu, sigma, won, now, f"{lid}/{p}"))
        return after

    def void_ladder_games(self, lid: str | None, owner: str | None = None) -> int:
        """Set the running games of ``lid`` (of every ladder if None; of ``owner`` only,
        if given) void: those stopped with the referee. Never rated."""
        sql = "UPDATE ladder_games SET status = 'void', lease_until = NULL WHERE status = 'running'"
        args: list[Any] = []
        for column, value in (("ladder_id", lid), ("owner", owner)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        with self._tx() as c:
            return int(c.execute(sql, args).rowcount)

    def ladder_games(self, lid: str, after_rated: int = 0, limit: int = 1000,
                     bot: str | None = None, newest_first: bool = False) -> list[LadderGameRow]:
        """Finished (rated) games of ``lid`` in rating order (or the newest first), after
        update ``after_rated`` (of ``bot`` only, if given), without their records."""
        sql = f"SELECT {_GAME} FROM ladder_games WHERE ladder_id = ? AND rated > ?"
        args: list[Any] = [lid, after_rated]
        if bot is not None:
            sql += " AND players LIKE ?"
            args.append(f'%{json.dumps(bot)}%')
        order = " ORDER BY rated DESC" if newest_first else " ORDER BY rated"
        rows = self._query(sql + order + " LIMIT ?", (*args, limit))
        games = [_game(r) for r in rows]
        return [g for g in games if bot is None or bot in g.players]

    def ladder_game(self, gid: str) -> LadderGameRow | None:
        rows = self._query(f"SELECT {_GAME}, record_z FROM ladder_games WHERE id = ?", (gid,))
        if not rows:
            return None
        g = _game(rows[0])
        g.record = record_of(rows[0][-1])
        return g

    def ladder_game_counts(self, lid: str) -> dict[LadderGameStatus, int]:
        return {LadderGameStatus(s): int(n) for s, n in self._query(
            "SELECT status, COUNT(*) FROM ladder_games WHERE ladder_id = ? GROUP BY status",
            (lid,))}


def _ladder(r: Sequence[Any]) -> LadderRow:
    return LadderRow(str(r[0]), str(r[1]), json.loads(r[2]), LadderStatus(r[3]), float(r[4]),
                     int(r[5]))


def _real(v: Any) -> float | None:
    return None if v is None else float(v)


def _game(r: Sequence[Any]) -> LadderGameRow:
    return LadderGameRow(
        str(r[0]), str(r[1]), list(json.loads(r[2])), LadderGameStatus(r[3]), float(r[4]),
        r[5], None if r[6] is None else int(r[6]), result_of(r[7]),
        None if r[8] is None else list(json.loads(r[8])),
        None if r[9] is None else [(float(m), float(s)) for m, s in json.loads(r[9])],
        None if r[10] is None else json.loads(r[10]))
