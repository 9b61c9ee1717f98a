"""What is stored, as types (``GameRow``, ``TournamentRow``), and the ``Store`` interface
that the referee and the scheduler use, whatever the database."""

from __future__ import annotations

import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chinchon.engine import HandScore, Outcome

from ..vocabulary import GameStatus, TournamentStatus

#: The schema this referee reads and writes, in the ``meta`` table of every database.
SCHEMA_VERSION = "5"
#: How a database of each older version is brought to the next (``{real}``, ``{blob}``:
#: the backend's floating-point and byte-string types; ``{termination}``, ``{winners}``:
#: its SQL reading them out of a row's result JSON). 1 -> 2: games hold their owner
#: and lease (several referee processes on one database), their record compressed
#: (``record_z``; older rows keep theirs as JSON text in ``record``), and beside it what
#: standings and filters read: the termination and the hand scores.
UPGRADES: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE games ADD COLUMN owner TEXT",
        "ALTER TABLE games ADD COLUMN lease_until {real}",
        "ALTER TABLE games ADD COLUMN record_z {blob}",
        "ALTER TABLE games ADD COLUMN record_size INTEGER",
        "ALTER TABLE games ADD COLUMN termination TEXT",
        "ALTER TABLE games ADD COLUMN winners TEXT",
        "ALTER TABLE games ADD COLUMN hands TEXT",
        "UPDATE games SET termination = {termination}, winners = {winners} "
        "WHERE result IS NOT NULL AND result != 'null'"),
    # 2 -> 3: the standing ladders: ``ladders``, ``ladder_entrants`` and
    # ``ladder_games``, new tables the schema creates (storage/ladders.py); nothing else.
    2: (),
    # 3 -> 4: a ladder game holds a lease too (several processes on one database): a
    # game whose process died or lost the database is voided by the others.
    3: ("ALTER TABLE ladder_games ADD COLUMN lease_until {real}",),
    # 4 -> 5: a ladder entrant's health: its forfeits on time in a row, when the last
    # was, and since when it is suspended (not seated) for them.
    4: ("ALTER TABLE ladder_entrants ADD COLUMN time_forfeits INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE ladder_entrants ADD COLUMN last_time_forfeit {real}",
        "ALTER TABLE ladder_entrants ADD COLUMN suspended {real}"),
}


class StoreError(Exception):
    """The database cannot be used (not a database, damaged, unreadable, of a newer
    version, or held by another server); the message says which database and why."""


class StoreHeld(StoreError):
    """The database is held by a running referee (its exclusive lock is taken).
    ``by_this_process``: the holder is this very process, through another of its
    stores: the same database opened twice (``db migrate --from X --to X``)."""

    def __init__(self, message: str, by_this_process: bool = False) -> None:
        super().__init__(message)
        self.by_this_process = by_this_process


class StoreUnavailable(StoreError):
    """The database cannot be reached now (its server restarted, the network dropped, a
    lock held past its timeout): nothing was written; the same call may work a moment
    later."""


class StoreFull(StoreUnavailable):
    """The database's disk is full: nothing was written; the same call works again once
    space is freed."""


@dataclass
class GameRow:
    id: str
    tournament_id: str | None
    seq: int
    players: list[str]
    deal_id: str
    status: GameStatus = GameStatus.SCHEDULED
    voided: int = 0
    result: Outcome | None = None
    #: The record document (``chinchon.v1.GameRecord`` in its JSON mapping).
    record: dict[str, Any] | None = None
    stats: list[dict[str, Any]] | None = None
    #: Each hand's scores (what standings count), stored beside the record.
    hands: list[HandScore] | None = None
    #: When it finished (a ``time.time()``).
    finished: float | None = None


@dataclass(frozen=True)
class GameFilter:
    """Which games of a tournament a page holds (None: any)."""

    status: GameStatus | None = None
    bot: str | None = None
    #: A ``chinchon.v1.Termination`` name, as results store it ("TERMINATION_NORMAL").
    termination: str | None = None
    #: A bot that won the game (alone or in a draw).
    winner: str | None = None


#: Every game (no filter).
ANY_GAME = GameFilter()


@dataclass
class TournamentRow:
    id: str
    name: str
    spec: dict[str, Any]
    status: TournamentStatus
    created: float
    started: float | None = None
    finished: float | None = None


@dataclass(frozen=True)
class ProcessRow:
    """A referee process sharing the database (``serve --shared``), as it last said."""

    owner: str
    #: Its gRPC address and its web view's URL ("" if none), as it was told to serve them.
    address: str
    http: str
    #: The bots with a stream on it: name -> (streams, seated, idle, other).
    bots: dict[str, tuple[int, int, int, int]]
    started: float
    #: Its last heartbeat (the database's clock; set by the store).
    seen: float


def _altered(step: str) -> str:
    """The table an upgrade step changes."""
    found = re.match(r"\s*(?:ALTER TABLE|UPDATE)\s+(\w+)", step)
    if found is None:
        raise ValueError(f"an upgrade step names no table: {step!r}")
    return found.group(1)


def upgrade_steps(where: str, found: str, dialect: dict[str, str],
                  tables: set[str]) -> list[str]:
    """The statements that bring a database of schema version ``found`` (holding
    ``tables``) to this referee's; StoreError for a newer version or one this referee
    does not know. A step altering a table the database does not have yet is left out:
    the schema then creates that table whole (a version 1 database gains the ladder
    tables with their lease column)."""
    try:
        v = int(found)
    except ValueError:
        raise StoreError(f"{where}: unknown database schema version {found!r}") from None
    if v > int(SCHEMA_VERSION) or v < 1:
        raise StoreError(f"{where}: database schema version {v}, this referee reads versions "
                         f"up to {SCHEMA_VERSION}; use a newer referee")
    steps = [step.format(**dialect)
             for n in range(v, int(SCHEMA_VERSION)) for step in UPGRADES[n]
             if _altered(step) in tables]
    if steps:
        steps.append(f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version'")
    return steps


def pack_record(record: dict[str, Any] | None) -> tuple[bytes | None, int | None]:
    """A record document as stored, and the size of its JSON: the JSON compressed (zlib,
    RFC 1950). About 10x smaller than the JSON (a game of ~400 actions: 15-25 kB of JSON,
    1.2-1.7 kB), and some 0.2 ms to write or read back, where the protobuf binary is
    4.6x smaller and takes milliseconds to build from the document
    (docs/benchmarks.md)."""
    if record is None:
        return None, None
    text = json.dumps(record, separators=(",", ":")).encode()
    return zlib.compress(text, 6), len(text)


def winners_json(row: GameRow) -> str | None:
    """The names of a finished game's winners, as stored (for the winner filter)."""
    if row.result is None:
        return None
    return json.dumps([row.players[w] for w in row.result.winners if w < len(row.players)])


def like_json_string(text: str) -> str:
    """A LIKE pattern (with a backslash as its escape character) matching JSON text that
    holds the string ``text`` (a name in a stored list of names)."""
    needle = json.dumps(text)
    for ch in ("\\", "%", "_"):
        needle = needle.replace(ch, "\\" + ch)
    return f"%{needle}%"


def record_text(stored: str | bytes | None) -> str | None:
    """A stored record's JSON text: inflated (new rows) or as it is (rows of version 1)."""
    if not stored:
        return None
    return stored if isinstance(stored, str) else zlib.decompress(stored).decode()


def record_of(stored: str | bytes | None) -> dict[str, Any] | None:
    """A stored record: compressed (new rows) or JSON text (rows of version 1)."""
    text = record_text(stored)
    d = json.loads(text) if text else None
    return d if isinstance(d, dict) else None


def hands_json(row: GameRow) -> str | None:
    """The hand scores of a finished game as stored: from ``row.hands``, or read once
    from its record."""
    hands = row.hands
    if hands is None and row.record is not None:
        hands = [HandScore.from_json(h) for h in row.record.get("hands", [])]
    if hands is None:
        return None
    return json.dumps([[h.closer, int(h.chinchon), list(h.points), list(h.in_hand)]
                       for h in hands], separators=(",", ":"))


def hands_of(text: str | None, record: dict[str, Any] | None) -> list[HandScore] | None:
    """Stored hand scores; for a row of schema 1 (none stored), read from its record."""
    if text:
        return [HandScore.of(c, bool(ch), p, i) for c, ch, p, i in json.loads(text)]
    if record is not None:
        return [HandScore.from_json(h) for h in record.get("hands", [])]
    return None


def result_json(result: Outcome | None) -> str | None:
    return None if result is None else json.dumps(result.to_json())


def result_of(text: str | None) -> Outcome | None:
    d = json.loads(text) if text else None
    return None if d is None else Outcome.from_json(d)


class Store(ABC):
    """What the referee and the scheduler need from storage."""

    #: Where the data is, for messages (a file name, or a URL without its password).
    where: str = ""
    #: Where the data is, to open it again (a file name, or the URL as given).
    target: str = ""

    @abstractmethod
    def secret(self, key: str) -> bytes:
        """A random secret kept under ``key``: made on first use, the same ever after."""

    @abstractmethod
    def upsert_bot(self, name: str, token_digest: str) -> None: ...

    @abstractmethod
    def bots(self) -> list[tuple[str, str]]: ...

    @abstractmethod
    def bot_created(self) -> dict[str, float]:
        """Registered bot name -> when it was registered (a ``time.time()``)."""

    @abstractmethod
    def add_bot(self, name: str, token_digest: str) -> bool:
        """Register a new bot; False (nothing written) if the name is registered."""

    @abstractmethod
    def set_bot_token(self, name: str, token_digest: str) -> bool:
        """Give a registered bot a new token digest; False if it is not registered."""

    @abstractmethod
    def remove_bot(self, name: str) -> bool:
        """Unregister a bot; False if it was not registered."""

    @abstractmethod
    def create_tournament(self, row: TournamentRow, games: Iterable[GameRow]) -> None:
        """Store a tournament and its games. The tournament row is written last, so it
        is never seen without all its games."""

    @abstractmethod
    def add_games(self, tid: str, games: Sequence[GameRow]) -> int:
        """Store more games of tournament ``tid`` (a format's next round or match), each
        unless its id is stored already (another process, or an earlier life of this
        one, created it: a game is created once); how many were new."""

    @abstractmethod
    def tournament(self, tid: str) -> TournamentRow | None: ...

    @abstractmethod
    def tournaments(self) -> list[TournamentRow]: ...

    @abstractmethod
    def set_tournament_status(self, tid: str, status: TournamentStatus,
                              notify: str | None = None) -> bool:
        """Set the status of ``tid``; False if it had it already (another process of a
        shared database set it first). ``notify``: as for :meth:`finish_game`, sent if it
        changed."""

    @abstractmethod
    def set_tournament_spec(self, tid: str, spec: dict[str, Any]) -> None:
        """Replace the stored declaration of tournament ``tid`` (its seed drawn)."""

    @abstractmethod
    def games(self, tid: str) -> list[GameRow]: ...

    @abstractmethod
    def games_page(self, tid: str, after_seq: int, limit: int, where: GameFilter = ANY_GAME,
                   records: bool = False) -> list[GameRow]:
        """Up to ``limit`` games of ``tid`` with ``seq > after_seq`` matching ``where``, in
        schedule order (keyset pagination: each page costs the same, however far in);
        their records only if ``records`` (else None)."""

    @abstractmethod
    def schedule(self, tid: str, where: GameFilter = ANY_GAME) -> list[GameRow]:
        """Every game of ``tid`` matching ``where``, without records, in schedule order
        (read in pages)."""

    @abstractmethod
    def finished_scores(self, tid: str, after_seq: int, limit: int) -> list[GameRow]:
        """Up to ``limit`` finished games of ``tid`` with ``seq > after_seq``, in schedule
        order, with their result, hand scores and statistics (what standings need), no
        record."""

    @abstractmethod
    def game(self, game_id: str, practice: bool = False) -> GameRow | None:
        """One game of a tournament (or of practice too, if ``practice``), with its record."""

    @abstractmethod
    def status_counts(self, tid: str) -> dict[GameStatus, int]:
        """How many games of ``tid`` are in each status (counted, none read)."""

    @abstractmethod
    def record_texts(self, tid: str, after_seq: int, limit: int) -> list[tuple[str, int, str]]:
        """(game id, seq, record JSON) of up to ``limit`` finished games of ``tid`` with
        ``seq > after_seq``, in schedule order: an export sends the text, never parsed."""

    @abstractmethod
    def record_bytes(self, tid: str) -> int:
        """The total size of the JSON of ``tid``'s finished games' records (none read)."""

    @abstractmethod
    def game_counts(self, tid: str) -> tuple[int, int]:
        """(games scheduled in all, games finished): cheap, called on every event."""

    @abstractmethod
    def mark_running(self, game_id: str) -> None: ...

    @abstractmethod
    def finish_game(self, row: GameRow, owner: str | None = None,
                    notify: str | None = None) -> bool:
        """Record a game's end (a practice game's row is made); False if nothing was
        written: it had finished already, or, with ``owner``, it is not running for
        ``owner`` any more (its lease ran out and it was voided, to be played again).
        ``notify``: a message for the other processes sharing the database, sent in the
        same transaction (so exactly when the end is stored)."""

    @abstractmethod
    def prune_games(self, keep: int, older_than: float) -> int:
        """Delete the records of games outside tournaments (practice) finished before
        ``older_than`` (a ``time.time()``) and all but the ``keep`` newest; return how
        many were deleted. Tournament games are never deleted."""

    @abstractmethod
    def claim_game(self, game_id: str, owner: str, lease: float, deal_id: str | None = None) -> bool:
        """Take a scheduled game for ``owner`` with a lease; False if it is not scheduled
        (or, with ``deal_id``, another game of that deal is running)."""

    @abstractmethod
    def begin_game(self, game_id: str, owner: str | None = None, lease: float = 0.0,
                   deal_id: str | None = None) -> int | None:
        """Mark ``game_id`` running (alone on the database: ``owner`` None), or claim it
        for ``owner`` with a lease as :meth:`claim_game` does; the times it was voided
        before (this play's attempt number: its deal is drawn from it), or None if it
        was not taken."""

    @abstractmethod
    def still_scheduled(self, game_ids: Sequence[str]) -> set[str]:
        """Which of ``game_ids`` are scheduled still."""

    @abstractmethod
    def renew_leases(self, owner: str, lease: float) -> int:
        """Extend the leases of ``owner``'s running games to ``lease`` seconds from now, on
        the database's clock; how many."""

    @abstractmethod
    def heartbeat(self, row: ProcessRow) -> None:
        """Say that the process ``row.owner`` is alive, and which bots it holds."""

    @abstractmethod
    def processes(self, within: float) -> list[ProcessRow]:
        """The processes heard from in the last ``within`` seconds (of the database's
        clock)."""

    @abstractmethod
    def forget_processes(self, owner: str | None, older_than: float | None) -> int:
        """Delete the row of ``owner`` (a process that stops) and, unless ``older_than``
        is None, those not heard from for ``older_than`` seconds (the database's clock)."""

    @abstractmethod
    def db_clock(self) -> float:
        """The database's clock now (seconds since the epoch): what leases are judged by."""

    @abstractmethod
    def game_owner(self, game_id: str) -> str | None:
        """The process playing ``game_id`` (shared mode), None if it is not running."""

    @abstractmethod
    def void_expired(self, grace: float = 0.0) -> int:
        """Set running games whose lease ran out more than ``grace`` seconds ago (on the
        database's clock) back to scheduled; how many."""

    @abstractmethod
    def void_running(self, tid: str) -> int: ...

    @abstractmethod
    def void_game(self, game_id: str, owner: str | None = None) -> None:
        """Set one running game back to ``scheduled`` (counted in ``voided``), to be
        played again; with ``owner``, only if it is still that process's."""

    @abstractmethod
    def void_owned(self, owner: str) -> int:
        """Set the games ``owner`` is playing back to ``scheduled`` (a process of a shared
        database that stops hands its games back at once); how many."""

    def damaged_games(self, tid: str) -> dict[str, str]:
        """The games of ``tid`` whose stored row could not be read (left out of what was
        read): game id -> why."""
        return {}

    @abstractmethod
    def close(self) -> None: ...
