"""Tournament declarations: the one model of a tournament, its TOML codec and its bounds.

A tournament is declared in TOML (or through the admin service)::

    name = "Friday league"
    table_size = 2              # players per table (2 by default; 3+ supported)
    games_per_pairing = 100     # rounded up to whole seat rotations
    duplicate_deals = false     # true: each deal replayed with the seats rotated
    public_logs = false         # true: launched bots' stderr public once it is over
    concurrency = 4             # games at once
    start = "manual"            # the default; or "when_connected", "now", an ISO 8601 time
    seed = "secret"             # optional: generated (and kept) when absent

    [rules]                     # any option of the rule set
    jokers = 1

    [time_control]
    per_move = 1.0
    bank = 30.0

    [policies]
    max_illegal_retries = 2
    max_strikes = 3
    reconnect_grace = 10.0
    absence_limit = 300.0       # seconds absent before all of a bot's games forfeit

    [[participants]]
    name = "greedy-py"
    command = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]

:class:`TournamentSpec` is the one model of a declaration, with its defaults and its
validation; ``from_dict``/``from_toml``/``to_dict``/``to_toml`` are its TOML codec (the
file read and the text written by :mod:`..declarations.toml`, the values checked with
:mod:`..declarations.bounds`), and :mod:`.wire` its protobuf codec
(``CreateTournament``): both leave an absent field to the model's default.
docs/tournaments.md lists the fields in both spellings. A mistake is a
:class:`SpecError` (the declarations' one error) naming the field; a declaration read
back from the database is :func:`declared`.

The schedule itself is :mod:`.round_robin`'s; :func:`schedule` builds it for a spec,
within the bounds above.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import math
import secrets
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet, RuleSetError
from chinchon.engine.shuffle import relabellings

from ..config import Policies, TimeControl
from ..declarations import bounds as check
from ..declarations import toml
from ..declarations.bounds import MAX_CONCURRENCY as MAX_CONCURRENCY
from ..declarations.errors import FieldError
from ..texts import (
    MAX_NAME,
    MAX_STAGE_NAME,
    check_bot_name,
    check_name,
    check_token,
    clip,
    shown,
)
from .formats.chain import plan_of
from .formats.kinds.round_robin import WholeRoundRobin
from .formats.spec import MAX_GAMES, Format
from .formats.spec import from_toml as format_from_toml
from .formats.spec import to_toml as format_to_toml
from .round_robin import RoundRobin

#: Off by default: a bot that remembers one twin of a duplicate deal wins measurably
#: more of the other, suit relabelling or not (docs/duplicate-deals.md).
DUPLICATE_DEALS_DEFAULT = False

# Bounds of a declaration: an organizer's typo must be refused, not freeze the referee
# or fill its disk. They are generous for a real competition: 200 bots is a large
# class or league; 100,000 games is a 45-bot round-robin of 100 games per pairing
# (99,000 games: days of play at a few seconds per game and concurrency 16). Running a
# tournament reads all its rows when it starts and counts them at every event: ~0.9 s
# and ~25 ms at 100,000 games.
#: Most participants (the balanced-subset choice for 200 bots at table_size 3 takes ~2 s).
MAX_PARTICIPANTS = 200
#: Most games in one tournament's schedule (each is a row of the database):
#: formats/spec.py's MAX_GAMES.
#: Largest declared rating, either way (Elo-like numbers are in the thousands).
MAX_RATING = 1e6
#: Furthest a start time may be ahead (a year and a day): a later one is a typo.
MAX_START_AHEAD = dt.timedelta(days=366)

_TOP_KEYS = {
    "name", "participants", "rules", "time_control", "policies", "table_size",
    "games_per_pairing", "duplicate_deals", "start", "concurrency", "seed", "format",
    "public_logs",
}
_PARTICIPANT_KEYS = {"name", "token", "command", "instances", "rating"}



#: A tournament declaration that cannot be used: the declarations' one error, naming
#: the field (its name of old, which callers catch).
SpecError = FieldError


class StartMode(enum.StrEnum):
    """When a tournament starts, unless it starts at a given time (a datetime)."""

    #: When the organizer says so: admin ``StartTournament``, or ``chinchon tournament
    #: run`` (the command is the start: it waits, boundedly, for the bots it launched).
    MANUAL = "manual"
    #: Once every participant is connected (or, after each reconnect grace, once at
    #: least two are: the absent then forfeit).
    WHEN_CONNECTED = "when_connected"
    #: At once.
    NOW = "now"


#: A start: a mode, or a moment (timezone-aware, UTC).
Start = StartMode | dt.datetime


@dataclass(frozen=True)
class Participant:
    name: str
    token: str = ""
    command: tuple[str, ...] = ()
    #: Copies of the command to launch (streams the bot offers); 0 = automatic.
    instances: int = 0
    #: A rating the organizer gives (seeding = "ratings"); None: none.
    rating: float | None = None


@dataclass(frozen=True)
class TournamentSpec:
    name: str
    participants: tuple[Participant, ...]
    rules: RuleSet = field(default_factory=RuleSet)
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    table_size: int = 2
    games_per_pairing: int = 2
    duplicate_deals: bool = DUPLICATE_DEALS_DEFAULT
    #: A StartMode or a moment (an ISO 8601 string is accepted and parsed; UTC if it
    #: names no zone). Manual by default: the one safe default for a long-lived
    #: referee, see docs/tournaments.md.
    start: Start = StartMode.MANUAL
    concurrency: int = 4
    seed: str = ""
    #: How it is played: stages of formats (formats/spec.py); one round-robin by default.
    format: Format = field(default_factory=Format)
    #: The launched bots' stderr lines shown to anyone once the tournament is over
    #: (False: only to each bot's token and the admin token; web/botlogs.py).
    public_logs: bool = False
    #: Read back from the database (:func:`declared`): the rules of what an organizer
    #: types (the names' rule, the start's distance) were checked when it was declared
    #: and are not checked again, so a tournament stored under older, looser rules stays
    #: readable. Not a part of the declaration (not compared, not written).
    stored: bool = field(default=False, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", parse_start(self.start))
        self._check_name_and_start()
        self._check_participants()
        self._check_table()
        if not 1 <= self.games_per_pairing <= MAX_GAMES:
            raise SpecError(
                f"games_per_pairing: 1 to {MAX_GAMES}, got {self.games_per_pairing}")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise SpecError(f"concurrency: 1 to {MAX_CONCURRENCY}, got {self.concurrency}")
        self._check_format()

    def _check_name_and_start(self) -> None:
        if self.stored:
            return  # checked when it was declared (the rules may have grown since)
        check_name(self.name, "name", MAX_NAME)
        self._check_stage_names()
        if isinstance(self.start, dt.datetime) and \
                self.start > dt.datetime.now(dt.UTC) + MAX_START_AHEAD:
            raise SpecError(f"start: {self.start.isoformat()} is more than "
                            f"{MAX_START_AHEAD.days} days ahead")

    def _check_stage_names(self) -> None:
        """Each stage's name, if it has one, a name (the text rule), and its own."""
        first: dict[str, int] = {}
        for i, stage in enumerate(self.format.stages):
            if not stage.name:
                continue  # named after its kind
            where = f"{self.format.where(i)}.name"
            check_name(stage.name, where, MAX_STAGE_NAME)
            if stage.name in first:
                raise FieldError(where, f"{clip(stage.name)} is also the name of "
                                f"{self.format.where(first[stage.name])}: each stage needs "
                                "its own")
            first[stage.name] = i

    def _check_participants(self) -> None:
        """At least 2, at most MAX_PARTICIPANTS, distinct valid names, one token each."""
        names = [p.name for p in self.participants]
        if len(names) < 2:
            raise SpecError(f"participants: at least 2 bots, got {len(names)}")
        if len(names) > MAX_PARTICIPANTS:
            raise SpecError(f"participants: at most {MAX_PARTICIPANTS} bots, got {len(names)}")
        for i, n in enumerate(names):
            check_bot_name(n, f"participants[{i}].name")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SpecError(f"participants: duplicate name(s) {', '.join(dup[:10])}")
        holders: dict[str, str] = {}
        for p in self.participants:
            if p.token and p.token in holders:
                # The token itself is a secret: only the names are shown.
                raise SpecError(f"participants: {holders[p.token]} and {p.name} have the same "
                                "token (each bot needs its own)")
            if p.token:
                holders[p.token] = p.name
            if not 0 <= p.instances <= MAX_CONCURRENCY:
                raise SpecError(f"participants.instances: {p.name}: 0 (automatic) to "
                                f"{MAX_CONCURRENCY}, got {p.instances}")
        for i, p in enumerate(self.participants):
            if p.token:
                check_token(p.token, f"participants[{i}].token (bot '{p.name}')")

    def _check_table(self) -> None:
        """The table size against the participants, the rules and duplicate deals."""
        names = self.participants
        if not 2 <= self.table_size <= len(names):
            raise SpecError(
                f"table_size: must be 2 to the number of participants ({len(names)}), "
                f"got {self.table_size}"
            )
        if self.rules.players != self.table_size:
            raise SpecError(
                f"rules.players ({self.rules.players}) contradicts table_size ({self.table_size})"
            )
        if self.duplicate_deals and relabellings(self.rules.wild_naturals) < self.table_size:
            raise SpecError(
                f"duplicate_deals: the wild cards {' '.join(self.rules.wild_cards)} leave "
                f"{relabellings(self.rules.wild_naturals)} suit relabellings that keep them "
                f"wild, fewer than the {self.table_size} twins of a deal: twins would be "
                "dealt the same cards (docs/duplicate-deals.md)"
            )

    def _check_format(self) -> None:
        """Check the participants' ratings and the format (formats/bounds.py; the
        round-robin of a declaration without one: its schedule's size, estimated)."""
        for p in self.participants:
            if p.rating is not None and not (math.isfinite(p.rating)
                                             and abs(p.rating) <= MAX_RATING):
                raise SpecError(f"participants.rating: {p.name}: a number from {-MAX_RATING:g} "
                                f"to {MAX_RATING:g}, got {p.rating}")
        plan_of(self).check()

    # -- construction ---------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], *, stored: bool = False) -> TournamentSpec:
        """The declaration of TOML mapping ``data`` (SpecError naming the field);
        ``stored``: read back from the database (see the field)."""
        check.known(data, _TOP_KEYS)
        table = check.whole(data.get("table_size", _DEFAULTS["table_size"]), "table_size")
        rules_d = dict(data.get("rules") or {})
        if not isinstance(rules_d, dict):
            raise SpecError("rules: must be a table of rule-set options")
        players_given = "players" in rules_d
        rules_d.setdefault("players", table)
        try:
            rules = RuleSet.from_dict(rules_d)
        except RuleSetError as e:
            # players comes from table_size unless the declaration set it: name that field.
            from_table = e.field == "players" and not players_given
            where = "table_size" if from_table else f"rules.{e.field}"
            raise SpecError(f"{where}: {e.message}") from None
        tc = TimeControl(**check.numbers(data, "time_control", {"per_move": float,
                                                                "bank": float}))
        pol = Policies(**check.numbers(data, "policies", {
            "max_illegal_retries": int, "max_strikes": int, "reconnect_grace": float,
            "absence_limit": float}))
        parts = []
        raw_parts = data.get("participants") or []
        if not isinstance(raw_parts, list):
            raise SpecError("participants: must be a list of [[participants]] tables")
        for i, p in enumerate(raw_parts):
            if isinstance(p, str):
                p = {"name": p}
            if not isinstance(p, dict) or "name" not in p:
                raise SpecError(f"participants[{i}]: needs a name")
            check.known(p, _PARTICIPANT_KEYS, ("participants", i), listed=False)
            rating = p.get("rating")
            parts.append(Participant(
                str(p["name"]), str(p.get("token", "")),
                check.command(p.get("command", []), ("participants", i, "command")),
                check.whole(p.get("instances", 0), ("participants", i, "instances")),
                None if rating is None else check.number(rating, ("participants", i, "rating"))))
        # An absent field takes the model's default (the dataclass's, nowhere else).
        given: dict[str, Any] = {
            k: check.whole(data[k], k) for k in ("table_size", "games_per_pairing", "concurrency")
            if k in data
        }
        for key in ("duplicate_deals", "public_logs"):
            if key in data:
                given[key] = check.switch(data[key], key)
        if "start" in data:
            given["start"] = parse_start(data["start"])
        if "seed" in data:
            given["seed"] = str(data["seed"])
        if "format" in data:
            given["format"] = format_from_toml(data["format"])
        return cls(name=str(data.get("name", "")), participants=tuple(parts), rules=rules,
                   time_control=tc, policies=pol, stored=stored, **given)

    @classmethod
    def from_toml(cls, path: str | Path) -> TournamentSpec:
        return cls.from_dict(toml.read(path))

    def to_dict(self, with_secrets: bool = True) -> dict[str, Any]:
        return {
            "name": self.name,
            "participants": [
                {"name": p.name, **({"token": p.token} if with_secrets and p.token else {}),
                 "command": list(p.command), "instances": p.instances,
                 **({"rating": p.rating} if p.rating is not None else {})}
                for p in self.participants
            ],
            "rules": self.rules.to_dict(),
            "time_control": {"per_move": self.time_control.per_move,
                             "bank": self.time_control.bank},
            "policies": {
                "max_illegal_retries": self.policies.max_illegal_retries,
                "max_strikes": self.policies.max_strikes,
                "reconnect_grace": self.policies.reconnect_grace,
                "absence_limit": self.policies.absence_limit,
            },
            "table_size": self.table_size,
            "games_per_pairing": self.games_per_pairing,
            "duplicate_deals": self.duplicate_deals,
            "start": start_text(self.start),
            "concurrency": self.concurrency,
            **({"seed": self.seed} if with_secrets else {}),
            # Only when given: a declaration without one keeps its fingerprint.
            **({"format": f} if (f := format_to_toml(self.format)) is not None else {}),
            **({"public_logs": True} if self.public_logs else {}),
        }

    def to_toml(self, with_secrets: bool = True) -> str:
        """The declaration as TOML text that ``from_toml`` reads back to an equal spec."""
        return toml.dumps(self.to_dict(with_secrets))

    def with_seed(self) -> TournamentSpec:
        if self.seed:
            return self
        return _replace(self, seed=secrets.token_hex(16))

    @property
    def bots(self) -> list[str]:
        return [p.name for p in self.participants]

    @property
    def connect_wait(self) -> float:
        """How long the bots are waited for, when they start or after the referee
        restarted, before a game may count one absent: 30 s (a bot slow to start, the
        SDK retrying for 30 s), or the reconnect grace if that is longer."""
        return max(30.0, self.policies.reconnect_grace)

    def fingerprint(self) -> str:
        """Identifies a declaration (without tokens): the same file resumes the same run."""
        d = self.to_dict(with_secrets=False)
        d["seed"] = self.seed
        if self.start is StartMode.MANUAL:
            # ``tournament run`` starts a manual tournament as it did a when_connected one
            # (once its bots are connected): a declaration without ``start``, which meant
            # when_connected before manual became the default, resumes its run.
            d["start"] = StartMode.WHEN_CONNECTED.value
        for p in d["participants"]:
            p.pop("command", None)
            p.pop("instances", None)
        if self.policies.absence_limit == Policies.absence_limit:
            del d["policies"]["absence_limit"]  # runs declared before it existed resume
        # The house rules at their defaults are left out, as records leave them out:
        # runs declared before they existed resume.
        d["rules"] = self.rules.to_dict(compact=True)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


#: The model's defaults of its plain fields (the dataclass's, read once).
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(TournamentSpec)}


def declared(stored: dict[str, Any]) -> TournamentSpec:
    """The declaration a stored tournament was created from (keys starting with "_" are
    bookkeeping of the tools that created the row); SpecError if it is not one. The
    rules of what an organizer types are not checked again (``TournamentSpec.stored``):
    a tournament declared under older rules stays readable."""
    try:
        return TournamentSpec.from_dict({k: v for k, v in stored.items()
                                         if not k.startswith("_")}, stored=True)
    except SpecError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError) as e:
        raise SpecError(f"not a declaration ({type(e).__name__}: {e})") from None


def schedule(spec: TournamentSpec, tag: str) -> RoundRobin:
    """The schedule of ``spec``, a round-robin declared without a format, refused
    (SpecError) if larger than MAX_GAMES. Only it has a schedule made in advance: the
    other formats' games are created as they come due (formats/plan.py's ``next_games``,
    director/planner.py)."""
    plan = plan_of(spec)
    if not isinstance(plan, WholeRoundRobin):
        raise ValueError("schedule: a format's games are created as they come due "
                         "(formats.plan.next_games), not made in advance")
    return plan.schedule(tag)  # (a FormatError is a SpecError: one FieldError)


def _replace(spec: TournamentSpec, **changes: Any) -> TournamentSpec:
    from dataclasses import replace

    return replace(spec, **changes)


def parse_start(start: object) -> Start:
    """A start from its TOML spelling (a mode's name or an ISO 8601 time, UTC if it
    names no zone) or as it is; a moment is returned in UTC. SpecError naming ``start``."""
    if isinstance(start, StartMode):
        return start
    if isinstance(start, dt.datetime):
        return check.utc(start)
    if not isinstance(start, str):
        raise SpecError("start", f"must be a string, got {shown(start)}")
    try:
        return StartMode(start)
    except ValueError:
        pass
    t = check.iso_time(start)
    if t is None:
        raise SpecError("start", f"{shown(start)} is not 'now', 'when_connected', 'manual' "
                        "or an ISO 8601 time")
    return t


def start_text(start: Start) -> str:
    """A start in its TOML spelling."""
    return start.value if isinstance(start, StartMode) else start.isoformat()


def start_time(start: Start | str) -> dt.datetime | None:
    """The start moment, or None for a start mode."""
    s = parse_start(start)
    return None if isinstance(s, StartMode) else s
