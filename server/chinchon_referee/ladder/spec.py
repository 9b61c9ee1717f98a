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

Pure: no I/O but :meth:`LadderSpec.from_toml`'s reading of its file.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import secrets
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet, RuleSetError

from ..config import Policies, TimeControl
from ..texts import MAX_NAME, TextError, check_bot_name, check_name, check_token, shown
from ..tournament.model import MAX_CONCURRENCY, SpecError, number_section

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


class LadderError(ValueError):
    """A ladder declaration that cannot be used; the message names the field."""


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
        try:
            check_bot_name(self.name, f"{where}.name")
            if self.inherits:
                check_bot_name(self.inherits, f"{where}.inherits")
            if self.token:
                check_token(self.token, f"{where}.token (bot '{self.name}')")
        except TextError as e:
            raise LadderError(str(e)) from None
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

    def __post_init__(self) -> None:
        try:
            check_name(self.name, "name", MAX_NAME)
        except TextError as bad:
            raise LadderError(str(bad)) from None
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
            if t is not None and (t.tzinfo is None or abs(t - _now()) > MAX_AHEAD):
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
    def from_dict(cls, data: dict[str, Any]) -> LadderSpec:
        if not isinstance(data, dict):
            raise LadderError("a ladder declaration is a table of fields")
        unknown = sorted(set(data) - _TOP)
        if unknown:
            raise LadderError(f"{unknown[0]}: unknown field; the fields are {', '.join(sorted(_TOP))}")
        table = _int(data, "table_size", 2)
        rules_d = data.get("rules") or {}
        if not isinstance(rules_d, dict):
            raise LadderError("rules: must be a table of rule-set options")
        given = "players" in rules_d
        try:
            rules = RuleSet.from_dict({"players": table, **rules_d})
        except RuleSetError as e:
            where = "table_size" if e.field == "players" and not given else f"rules.{e.field}"
            raise LadderError(f"{where}: {e.message}") from None
        try:
            tc = TimeControl(**_numbers(data, "time_control", {"per_move": float, "bank": float}))
            pol = Policies(**_numbers(data, "policies", {
                "max_illegal_retries": int, "max_strikes": int, "reconnect_grace": float,
                "absence_limit": float}))
        except TypeError as e:
            raise LadderError(str(e)) from None
        except ValueError as e:
            raise LadderError(str(e)) from None
        try:
            entry = Entry(data.get("entry", Entry.LISTED.value))
        except ValueError:
            raise LadderError(f"entry: 'listed' or 'registered', got {shown(data.get('entry'))}") from None
        k = data.get("k", DEFAULT_K)
        if isinstance(k, bool) or not isinstance(k, int | float):
            raise LadderError(f"k: must be a number, got {shown(k)}")
        return cls(name=_str(data, "name"), entrants=_entrants(data.get("entrants", [])),
                   rules=rules, time_control=tc, policies=pol, table_size=table,
                   concurrency=_int(data, "concurrency", 4), entry=entry,
                   opens=moment(data.get("opens"), "opens"),
                   closes=moment(data.get("closes"), "closes"),
                   seed=_str(data, "seed", ""), k=float(k),
                   suspend_after=_int(data, "suspend_after", DEFAULT_SUSPEND_AFTER))

    @classmethod
    def from_toml_text(cls, text: str, where: str = "the declaration") -> LadderSpec:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise LadderError(f"{where}: not valid TOML: {e}") from None
        except RecursionError:
            raise LadderError(f"{where}: its values are nested too deep") from None
        return cls.from_dict(data)

    @classmethod
    def from_toml(cls, path: str | Path) -> LadderSpec:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise LadderError(f"cannot read {p}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise LadderError(f"{p}: not UTF-8 text (byte {e.start})") from None
        return cls.from_toml_text(text, str(p))

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
        d = self.to_dict(with_secrets)
        lines = [f"{k} = {_value(v)}" for k, v in d.items() if not isinstance(v, dict | list)]
        for k, v in d.items():
            if isinstance(v, dict):
                lines += ["", f"[{k}]", *(f"{kk} = {_value(vv)}" for kk, vv in v.items())]
        for e in d["entrants"]:
            lines += ["", "[[entrants]]", *(f"{kk} = {_value(vv)}" for kk, vv in e.items())]
        return "\n".join(lines) + "\n"


def moment(value: object, where: str) -> dt.datetime | None:
    """A window's end from its TOML spelling: "now" or absent (None), a TOML date-time or
    an ISO 8601 string (UTC if it names no zone)."""
    if value is None or value == "now":
        return None
    if isinstance(value, dt.datetime):
        t = value
    elif isinstance(value, str):
        try:
            t = dt.datetime.fromisoformat(value)
        except ValueError:
            raise LadderError(f"{where}: 'now' or an ISO 8601 time, got {shown(value)}") from None
    else:
        raise LadderError(f"{where}: 'now' or an ISO 8601 time, got {shown(value)}")
    return t.astimezone(dt.UTC) if t.tzinfo else t.replace(tzinfo=dt.UTC)


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
            raise LadderError(f"entrants[{i}]: needs a name")
        extra = sorted(set(e) - _ENTRANT)
        if extra:
            raise LadderError(f"entrants[{i}].{extra[0]}: unknown field")
        cmd = e.get("command", [])
        if isinstance(cmd, str):
            cmd = cmd.split()
        if not isinstance(cmd, list) or not all(isinstance(c, str) for c in cmd):
            raise LadderError(f"entrants[{i}].command: a list of strings (or one string)")
        out.append(Entrant(_str(e, "name", where=f"entrants[{i}].name"),
                           _str(e, "token", "", f"entrants[{i}].token"), tuple(cmd),
                           _int(e, "instances", 0, f"entrants[{i}].instances"),
                           _str(e, "inherits", "", f"entrants[{i}].inherits")))
    return tuple(out)


def _entrant_dict(e: Entrant, with_secrets: bool) -> dict[str, Any]:
    return {"name": e.name, **({"token": e.token} if with_secrets and e.token else {}),
            **({"command": list(e.command)} if e.command else {}),
            **({"instances": e.instances} if e.instances else {}),
            **({"inherits": e.inherits} if e.inherits else {})}


def _str(data: dict[str, Any], key: str, default: str | None = None, where: str = "") -> str:
    v = data.get(key, default)
    if not isinstance(v, str):
        raise LadderError(f"{where or key}: must be a string, got {shown(v)}")
    return v


def _int(data: dict[str, Any], key: str, default: int, where: str = "") -> int:
    v = data.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise LadderError(f"{where or key}: must be a whole number, got {shown(v)}")
    return v


def _numbers(data: dict[str, Any], name: str, kinds: dict[str, type]) -> dict[str, Any]:
    """The ``[name]`` table read as a tournament's is (tournament.model.number_section)."""
    try:
        return number_section(data, name, kinds)
    except SpecError as e:
        raise LadderError(str(e)) from None

def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML spelling for {v!r}")
