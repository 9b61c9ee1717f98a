"""The tables of a referee's database (the same in both backends, in each one's types),
and what a copy of a database writes."""

from __future__ import annotations

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    token_digest TEXT NOT NULL,
    created {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    created {real} NOT NULL,
    started {real},
    finished {real}
);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    tournament_id TEXT,
    seq INTEGER NOT NULL,
    players TEXT NOT NULL,
    deal_id TEXT NOT NULL,
    status TEXT NOT NULL,
    voided INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    record TEXT,
    stats TEXT,
    started {real},
    finished {real},
    owner TEXT,
    lease_until {real},
    record_z {blob},
    record_size INTEGER,
    termination TEXT,
    winners TEXT,
    hands TEXT
);
CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id, seq);
CREATE INDEX IF NOT EXISTS games_by_finish ON games (finished) WHERE tournament_id IS NULL;
CREATE INDEX IF NOT EXISTS games_by_lease ON games (lease_until) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS games_by_status ON games (tournament_id, status);
CREATE TABLE IF NOT EXISTS processes (
    owner TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    http TEXT NOT NULL,
    bots TEXT NOT NULL,
    started {real} NOT NULL,
    seen {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS ladders (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    created {real} NOT NULL,
    rated INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ladder_entrants (
    id TEXT PRIMARY KEY,
    ladder_id TEXT NOT NULL,
    bot TEXT NOT NULL,
    mu {real} NOT NULL,
    sigma {real} NOT NULL,
    start_mu {real} NOT NULL,
    start_sigma {real} NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    wins {real} NOT NULL DEFAULT 0,
    last_game {real},
    joined {real} NOT NULL,
    removed INTEGER NOT NULL DEFAULT 0,
    inherits TEXT NOT NULL DEFAULT '',
    time_forfeits INTEGER NOT NULL DEFAULT 0,
    last_time_forfeit {real},
    suspended {real}
);
CREATE INDEX IF NOT EXISTS ladder_entrants_by_ladder ON ladder_entrants (ladder_id, bot);
CREATE TABLE IF NOT EXISTS ladder_games (
    id TEXT PRIMARY KEY,
    ladder_id TEXT NOT NULL,
    players TEXT NOT NULL,
    status TEXT NOT NULL,
    owner TEXT,
    started {real} NOT NULL,
    finished {real},
    rated INTEGER,
    result TEXT,
    places TEXT,
    ratings TEXT,
    stats TEXT,
    record_z {blob},
    record_size INTEGER,
    lease_until {real}
);
CREATE INDEX IF NOT EXISTS ladder_games_by_ladder ON ladder_games (ladder_id, rated);
CREATE INDEX IF NOT EXISTS ladder_games_running ON ladder_games (ladder_id)
    WHERE status = 'running';
"""


def schema_sql(dialect: dict[str, str]) -> str:
    """The tables and indexes of this schema version, in a backend's types."""
    return _SCHEMA.format(**dialect)


#: The tables, in the order a copy must write them, with their columns. (``processes``,
#: the live processes of a shared database, is not copied: it describes the running
#: referees, not the referee's data.)
TABLES: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "bots": ("name", "token_digest", "created"),
    "tournaments": ("id", "name", "spec", "status", "created", "started", "finished"),
    "games": ("id", "tournament_id", "seq", "players", "deal_id", "status", "voided",
              "result", "record", "stats", "started", "finished", "owner", "lease_until",
              "record_z", "record_size", "termination", "winners", "hands"),
    "ladders": ("id", "name", "spec", "status", "created", "rated"),
    "ladder_entrants": ("id", "ladder_id", "bot", "mu", "sigma", "start_mu", "start_sigma",
                        "games", "wins", "last_game", "joined", "removed", "inherits",
                        "time_forfeits", "last_time_forfeit", "suspended"),
    "ladder_games": ("id", "ladder_id", "players", "status", "owner", "started", "finished",
                     "rated", "result", "places", "ratings", "stats", "record_z", "record_size",
                     "lease_until"),
}
#: Each table's key, for copies in pages.
KEYS = {"meta": "key", "bots": "name", "tournaments": "id", "games": "id", "ladders": "id",
        "ladder_entrants": "id", "ladder_games": "id"}
