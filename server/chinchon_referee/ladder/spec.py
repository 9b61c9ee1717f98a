"""A ladder's declaration: the one model (:class:`LadderSpec`), its TOML codec and bounds.

A ladder is declared in TOML (``chinchon admin ladder create FILE``)::

    name = "Winter ladder"
    table_size = 2              # players per table (2 by default)
    concurrency = 4             # tables at once
    entry = "listed"            # who may enter: "listed" (the entrants below and those
                                # the organizer adds) or "registered" (any bot
                                # registered on this referee, as it connects)
    opens = "now"               # or an ISO 8601 time (UTC if it names no zone)
    closes = "2027-03-01T00:00:00Z"   # optional: open until the organizer closes it
    seed = "secret"             # optional: generated (and kept) when absent
    k = 3.0                     # the leaderboard orders by mu - k * sigma
    suspend_after = 3           # forfeits on time in a row that suspend a bot (0: never)

    [rules]                     # any option of the rule set
    score_limit = 60

    [time_control]
    per_move = 1.0
    bank = 30.0

    [policies]
    max_illegal_retries = 2
    max_strikes = 3
    reconnect_grace = 10.0

    [[entrants]]
    name = "greedy-v2"
    inherits = "greedy-v1"      # optional: starts from greedy-v1's rating

Read and written through the declarations' TOML (:mod:`..declarations.toml`) and
checked with their shared bounds; a stored ladder is read back with :func:`declared`.
Pure: no I/O but :meth:`LadderSpec.from_toml`'s reading of its file.
"""

from __future__ import annotations

import datetime as dt
import enum
import math
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet, RuleSetError

from ..config import Policies, TimeControl
from ..declarations import bounds as check
from ..declarations import toml
from ..declarations.bounds import MAX_CONCURRENCY
from ..declarations.errors import FieldError
from ..texts import MAX_NAME, check_bot_name, check_name, check_token, shown

#: Most entrants one ladder holds (each a row of ratings; a season of a large class).
MAX_ENTRANTS = 1000
#: Largest k of the conservative estimate mu - k * sigma (0: the leaderboard is by mu).
MAX_K = 10.0
#: Furthest a window's end may be from now (two years and a day): a later one is a typo.
MAX_AHEAD = dt.timedelta(days=731)
#: The leaderboard's default k: mu - 3 sigma, TrueSkill's conservative skill (the true
#: skill is above it with about 99.9% probability under the model).
DEFAULT_K = 3.0
#: Forfeits on time in a row that suspend a bot by default (docs/ladder.md, "Health").
DEFAULT_SUSPEND_AFTER = 3
#: The largest ``suspend_after``.
MAX_SUSPEND_AFTER = 100

_TOP = {"name", "table_size", "concurrency", "entry", "opens", "closes", "seed", "k",
        "suspend_after", "rules", "time_control", "policies", "entrants"}
_ENTRANT = {"name", "token", "command", "instances", "inherits"}


#: A ladder declaration that cannot be used: the declarations' one error, naming the
#: field (its name of old, which callers catch).
LadderError = FieldError


class NotEntrant(LadderError):
    """A bot named that is no entrant of the ladder (the service's NOT_FOUND)."""


class EnteredAlready(LadderError):
    """A bot entered that is an entrant already (the service's ALREADY_EXISTS)."""


class NotNow(LadderError):
    """A change the ladder or the bot is not in a state to take: the ladder is closed,
    the bot was removed already, or is not suspended (the service's FAILED_PRECONDITION)."""


class Entry(enum.StrEnum):
    """Who may enter a ladder."""

    #: The declared entrants, and the bots the organizer adds later.
    LISTED = "listed"
    #: Any bot registered on this referee, from its first stream while the ladder is open.
    REGISTERED = "registered"


@dataclass(frozen=True)
class Entrant:
    name: str
    token: str = ""
    command: tuple[str, ...] = ()
    instances: int = 0
    #: A bot whose rating this one starts from (a new version of it); "": a new entrant.
    inherits: str = ""

    def check(self, where: str) -> None:
        check_bot_name(self.name, f"{where}.name")
        if self.inherits:
            check_bot_name(self.inherits, f"{where}.inherits")
        if self.token:
            check_token(self.token, f"{where}.token (bot '{self.name}')")
        if self.inherits == self.name:
            raise LadderError(f"{where}.inherits: {self.name} cannot inherit from itself")
        if not 0 <= self.instances <= MAX_CONCURRENCY:
            raise LadderError(f"{where}.instances: 0 (automatic) to {MAX_CONCURRENCY}, "
                              f"got {self.instances}")


@dataclass(frozen=True)
class LadderSpec:
    name: str
    entrants: tuple[Entrant, ...] = ()
    rules: RuleSet = field(default_factory=RuleSet)
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    table_size: int = 2
    concurrency: int = 4
    entry: Entry = Entry.LISTED
    #: When it opens (UTC); None: at once.
    opens: dt.datetime | None = None
    #: When it closes by itself (UTC); None: when the organizer closes it.
    closes: dt.datetime | None = None
    seed: str = ""
    #: The leaderboard orders by mu - k * sigma.
    k: float = DEFAULT_K
    #: A bot that forfeits this many games in a row on time is suspended (not seated)
    #: until it shows life again; 0: never.
    suspend_after: int = DEFAULT_SUSPEND_AFTER
    #: Read back from the database (:func:`declared`): the rules of what an organizer
    #: types (the name's rule, the window's distance from now) were checked when it was
    #: declared and are not checked again, so a ladder stored under older, looser rules,
    #: or long ago, stays readable. Not a part of the declaration (not compared, not
    #: written).
    stored: bool = field(default=False, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        if not self.stored:
            check_name(self.name, "name", MAX_NAME)
        if len(self.entrants) > MAX_ENTRANTS:
            raise LadderError(f"entrants: at most {MAX_ENTRANTS}, got {len(self.entrants)}")
        for i, e in enumerate(self.entrants):
            e.check(f"entrants[{i}]")
        names = [e.name for e in self.entrants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise LadderError(f"entrants: duplicate name(s) {', '.join(dup)}")
        tokens = [e.token for e in self.entrants if e.token]
        if len(set(tokens)) != len(tokens):
            raise LadderError("entrants: two bots have the same token (each needs its own)")
        if not 2 <= self.table_size <= 8:
            raise LadderError(f"table_size: 2 to 8, got {self.table_size}")
        if self.rules.players != self.table_size:
            raise LadderError(f"rules.players ({self.rules.players}) contradicts table_size "
                              f"({self.table_size})")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise LadderError(f"concurrency: 1 to {MAX_CONCURRENCY}, got {self.concurrency}")
        if not (math.isfinite(self.k) and 0 <= self.k <= MAX_K):
            raise LadderError(f"k: a number from 0 to {MAX_K:g}, got {self.k}")
        if not 0 <= self.suspend_after <= MAX_SUSPEND_AFTER:
            raise LadderError(f"suspend_after: 0 (never) to {MAX_SUSPEND_AFTER}, "
                              f"got {self.suspend_after}")
        for what, t in (("opens", self.opens), ("closes", self.closes)):
            if t is not None and (t.tzinfo is None or (
                    not self.stored and abs(t - _now()) > MAX_AHEAD)):
                raise LadderError(f"{what}: a moment within {MAX_AHEAD.days} days of now, "
                                  f"got {t.isoformat()}")
        if self.opens is not None and self.closes is not None and self.closes <= self.opens:
            raise LadderError(f"closes: {self.closes.isoformat()} is not after opens "
                              f"({self.opens.isoformat()})")

    def check_inherits(self) -> None:
        """A new declaration's ``inherits`` each name another of its entrants (checked when
        it is declared, not when a stored one is read back): LadderError otherwise."""
        names = set(self.names)
        for i, e in enumerate(self.entrants):
            if e.inherits and e.inherits not in names:
                raise LadderError(f"entrants[{i}].inherits: no entrant {e.inherits!r} in this "
                                  "ladder (a bot inherits the rating of another of its entrants)")

    # -- the window ---------------------------------------------------------------------
    def is_open_at(self, when: dt.datetime) -> bool:
        """Within its window at ``when`` (the organizer's pause is the store's, not here)."""
        return (self.opens is None or when >= self.opens) and (
            self.closes is None or when < self.closes)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def with_seed(self) -> LadderSpec:
        return self if self.seed else replace(self, seed=secrets.token_hex(16))

    # -- TOML -----------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], *, stored: bool = False) -> LadderSpec:
        """The declaration of TOML mapping ``data`` (LadderError naming the field);
        ``stored``: read back from the database (see the field)."""
        if not isinstance(data, dict):
            raise LadderError("", "a ladder declaration is a table of fields")
        check.known(data, _TOP)
        table = check.whole(data.get("table_size", 2), "table_size")
        rules_d = data.get("rules") or {}
        if not isinstance(rules_d, dict):
            raise LadderError("rules: must be a table of rule-set options")
        given = "players" in rules_d
        try:
            rules = RuleSet.from_dict({"players": table, **rules_d})
        except RuleSetError as e:
            where = "table_size" if e.field == "players" and not given else f"rules.{e.field}"
            raise LadderError(f"{where}: {e.message}") from None
        tc = TimeControl(**check.numbers(data, "time_control", {"per_move": float,
                                                                "bank": float}))
        pol = Policies(**check.numbers(data, "policies", {
            "max_illegal_retries": int, "max_strikes": int, "reconnect_grace": float,
            "absence_limit": float}))
        try:
            entry = Entry(data.get("entry", Entry.LISTED.value))
        except ValueError:
            raise LadderError(f"entry: 'listed' or 'registered', got {shown(data.get('entry'))}") from None
        return cls(name=check.text(data.get("name"), "name"),
                   entrants=_entrants(data.get("entrants", [])),
                   rules=rules, time_control=tc, policies=pol, table_size=table,
                   concurrency=check.whole(data.get("concurrency", 4), "concurrency"),
                   entry=entry, opens=moment(data.get("opens"), "opens"),
                   closes=moment(data.get("closes"), "closes"),
                   seed=check.text(data.get("seed", ""), "seed"),
                   k=check.number(data.get("k", DEFAULT_K), "k"),
                   suspend_after=check.whole(data.get("suspend_after", DEFAULT_SUSPEND_AFTER),
                                             "suspend_after"), stored=stored)

    @classmethod
    def from_toml_text(cls, text: str, where: str = "the declaration") -> LadderSpec:
        return cls.from_dict(toml.loads(text, where))

    @classmethod
    def from_toml(cls, path: str | Path) -> LadderSpec:
        return cls.from_dict(toml.read(path))

    def to_dict(self, with_secrets: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "table_size": self.table_size, "concurrency": self.concurrency,
            "entry": self.entry.value, "k": self.k, "suspend_after": self.suspend_after,
            **({"opens": self.opens.isoformat()} if self.opens is not None else {}),
            **({"closes": self.closes.isoformat()} if self.closes is not None else {}),
            **({"seed": self.seed} if with_secrets and self.seed else {}),
            "rules": self.rules.to_dict(),
            "time_control": {"per_move": self.time_control.per_move,
                             "bank": self.time_control.bank},
            "policies": {"max_illegal_retries": self.policies.max_illegal_retries,
                         "max_strikes": self.policies.max_strikes,
                         "reconnect_grace": self.policies.reconnect_grace,
                         "absence_limit": self.policies.absence_limit},
            "entrants": [_entrant_dict(e, with_secrets) for e in self.entrants],
        }
        return out

    def to_toml(self, with_secrets: bool = True) -> str:
        """The declaration as TOML that :meth:`from_toml_text` reads back to an equal spec."""
        return toml.dumps(self.to_dict(with_secrets))


def declared(stored: dict[str, Any]) -> LadderSpec:
    """The declaration a stored ladder was created from; LadderError if it is not one.
    The rules of what an organizer types are not checked again (``LadderSpec.stored``):
    a ladder declared under older rules, or long ago, stays readable."""
    try:
        return LadderSpec.from_dict(stored, stored=True)
    except FieldError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError) as e:
        raise LadderError("", f"not a declaration ({type(e).__name__}: {e})") from None


def moment(value: object, where: str) -> dt.datetime | None:
    """A window's end from its TOML spelling: "now" or absent (None), a TOML date-time or
    an ISO 8601 string (UTC if it names no zone)."""
    if value is None or value == "now":
        return None
    if isinstance(value, dt.datetime):
        t = value
    elif isinstance(value, str):
        parsed = check.iso_time(value)
        if parsed is None:
            raise LadderError(where, f"'now' or an ISO 8601 time, got {shown(value)}")
        return parsed
    else:
        raise LadderError(where, f"'now' or an ISO 8601 time, got {shown(value)}")
    return check.utc(t)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _entrants(raw: object) -> tuple[Entrant, ...]:
    if not isinstance(raw, list):
        raise LadderError("entrants: must be a list of [[entrants]] tables")
    out = []
    for i, e in enumerate(raw):
        if isinstance(e, str):
            e = {"name": e}
        if not isinstance(e, dict) or "name" not in e:
            raise LadderError(("entrants", i), "needs a name")
        check.known(e, _ENTRANT, ("entrants", i), listed=False)
        out.append(Entrant(check.text(e["name"], ("entrants", i, "name")),
                           check.text(e.get("token", ""), ("entrants", i, "token")),
                           check.command(e.get("command", []), ("entrants", i, "command")),
                           check.whole(e.get("instances", 0), ("entrants", i, "instances")),
                           check.text(e.get("inherits", ""), ("entrants", i, "inherits"))))
    return tuple(out)


def _entrant_dict(e: Entrant, with_secrets: bool) -> dict[str, Any]:
    return {"name": e.name, **({"token": e.token} if with_secrets and e.token else {}),
            **({"command": list(e.command)} if e.command else {}),
            **({"instances": e.instances} if e.instances else {}),
            **({"inherits": e.inherits} if e.inherits else {})}
