"""The ``format`` field of the tournament model: a list of stages, each a format, with
who goes on to the next; its TOML spelling and its bounds.

TOML::

    format = "swiss"                    # one stage, every option at its default

    [format]                            # one stage with options
    kind = "knockout"
    third_place = true
    match = { games = 5, mode = "best_of" }

    [[format.stages]]                   # several stages
    kind = "swiss"
    rounds = 7
    advance = 8                         # the top 8 go on
    [[format.stages]]
    kind = "double_elimination"         # seeded by the Swiss's standings

A declaration without ``format`` is one round-robin stage: the schedule of a tournament
declared before formats existed, game for game (same ids, same deals). Every field, its
default and its bound are in docs/tournaments.md; a value out of bounds is refused with
a :class:`FormatError` naming the field (``format.stages[1].rounds: ...``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

from ...declarations.errors import FieldError
from ...texts import shown
from .. import tiebreaks as tb
from ..tiebreaks import Tiebreak

#: A ``format`` that cannot be used: the declarations' one error, naming the field (its
#: name of old, which callers catch).
FormatError = FieldError


class Kind(enum.StrEnum):
    ROUND_ROBIN = "round_robin"
    GAUNTLET = "gauntlet"
    SWISS = "swiss"
    KNOCKOUT = "knockout"
    DOUBLE_ELIMINATION = "double_elimination"


class Seeding(enum.StrEnum):
    #: The participants' order in the declaration (the first is seed 1).
    ORDER = "order"
    #: The participants' declared ``rating``, highest first (ties: declaration order).
    RATINGS = "ratings"
    #: Shuffled from the tournament's seed.
    RANDOM = "random"
    #: The previous stage's final standings (the default of every stage but the first).
    STANDINGS = "standings"
    #: The stage's ``seeds`` list (first stage only; the unlisted follow in order).
    LIST = "list"


class MatchMode(enum.StrEnum):
    #: At most ``games`` regular games; the first to win more than half wins.
    BEST_OF = "best_of"
    #: The first to win ``games`` games (at most 2 x games - 1 regular games).
    FIRST_TO = "first_to"


#: Most games in one tournament's schedule (each is a row of the database; the model's
#: bound, kept here, below the formats that plan within it).
MAX_GAMES = 100_000
#: Most stages in one tournament.
MAX_STAGES = 8
#: Most rounds of a Swiss (tables of 3+; at tables of 2 also at most one fewer than the
#: bots, or the bots when they are odd: past that, pairings must repeat).
MAX_ROUNDS = 100
#: Bounds of a match: ``games`` (best of), ``games`` (first to), extra games, sudden-death games.
MAX_BEST_OF = 99
MAX_FIRST_TO = 50
MAX_EXTRA_GAMES = 20
MAX_SUDDEN_DEATH = 10
#: Games a match may use beyond its most for games stopped by internal errors of the
#: referee (they do not count, and are played again): past them the match is decided
#: by points, then by seed.
ABORT_SLACK = 2


@dataclass(frozen=True)
class MatchSpec:
    """How a pairing of a knockout or double-elimination bracket plays out."""

    games: int = 3
    mode: MatchMode = MatchMode.BEST_OF
    #: A match level after its regular games: up to this many extra games (whole seat
    #: rotations: rounded up to even), decided as soon as one leads after a rotation ...
    extra_games: int = 2
    #: ... then up to this many single sudden-death games, the first one won decides;
    #: still level: the better seed goes on.
    sudden_death: int = 3
    #: None: the tournament's ``duplicate_deals``.
    duplicate_deals: bool | None = None

    @property
    def target(self) -> int:
        """Wins that decide the match."""
        return self.games // 2 + 1 if self.mode is MatchMode.BEST_OF else self.games

    def regular(self, duplicate: bool) -> int:
        """Most regular games (with duplicate deals, whole deals: even)."""
        n = self.games if self.mode is MatchMode.BEST_OF else 2 * self.games - 1
        return n + n % 2 if duplicate else n

    @property
    def extras(self) -> int:
        return self.extra_games + self.extra_games % 2

    def most(self, duplicate: bool) -> int:
        """Most games the match can take (regular, extra and sudden-death)."""
        return self.regular(duplicate) + self.extras + self.sudden_death

    def capacity(self, duplicate: bool) -> int:
        """Game numbers the match owns (``most`` plus replays of aborted games)."""
        return self.most(duplicate) + ABORT_SLACK


@dataclass(frozen=True)
class Stage:
    kind: Kind
    #: Shown in standings, report.md and the web view (default: from the kind).
    name: str = ""
    #: How many bots go on to the next stage (its top by this stage's final ranking;
    #: with groups, every group's first, then every group's second...). Required on
    #: every stage but the last, refused on the last.
    advance: int | None = None
    #: None: ORDER for the first stage, STANDINGS after.
    seeding: Seeding | None = None
    seeds: tuple[str, ...] = ()
    #: Gauntlet: the bots measured against the field (all the others).
    challengers: tuple[str, ...] = ()
    #: Round-robin, gauntlet, Swiss: games each table plays (None: the tournament's).
    games_per_pairing: int | None = None
    #: Round-robin: groups, each its own round-robin (seeds snaked across them).
    groups: int = 1
    #: Swiss: rounds (None: automatic, :func:`default_rounds`).
    rounds: int | None = None
    #: Swiss: points of a bye (None: the games of a table / table size, a fair share).
    bye_points: float | None = None
    #: Knockout, double elimination: each pairing's match.
    match: MatchSpec = field(default_factory=MatchSpec)
    #: Knockout: a match for 3rd place between the semi-finals' losers.
    third_place: bool = False
    #: Double elimination: if the losers' bracket's winner wins the grand final, each
    #: finalist has lost once and a second grand final decides (None: yes).
    grand_final_reset: bool | None = None
    #: The ranking order (empty: the kind's default, :mod:`.kinds`).
    tiebreaks: tuple[Tiebreak, ...] = ()

    @property
    def title(self) -> str:
        return self.name or self.kind.value.replace("_", " ").capitalize()

    @property
    def reset(self) -> bool:
        return self.grand_final_reset is not False

    def seeding_for(self, index: int) -> Seeding:
        if self.seeding is not None:
            return self.seeding
        if self.seeds:
            return Seeding.LIST
        return Seeding.ORDER if index == 0 else Seeding.STANDINGS


@dataclass(frozen=True)
class Format:
    stages: tuple[Stage, ...] = (Stage(Kind.ROUND_ROBIN),)

    @property
    def legacy(self) -> bool:
        """One round-robin stage with no option but its name: the tournament of a
        declaration without ``format``, played as it always was (same games, ids and
        deals, the default tie-breaks)."""
        return len(self.stages) == 1 and replace(self.stages[0], name="") == Stage(
            Kind.ROUND_ROBIN)

    def where(self, i: int) -> str:
        """How stage ``i``'s fields are named in messages."""
        return "format" if len(self.stages) == 1 else f"format.stages[{i}]"


@dataclass(frozen=True)
class Context:
    """What a format is checked against: the rest of the declaration."""

    names: tuple[str, ...]
    ratings: Mapping[str, float | None]
    table_size: int
    games_per_pairing: int
    duplicate_deals: bool
    max_games: int


class Rated(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def rating(self) -> float | None: ...


class Declaration(Protocol):
    """What the formats read of a tournament's declaration (the model's
    ``TournamentSpec`` is one): the formats sit below the model and never import it."""

    def __hash__(self) -> int: ...

    @property
    def participants(self) -> Sequence[Rated]: ...
    @property
    def bots(self) -> list[str]: ...
    @property
    def table_size(self) -> int: ...
    @property
    def games_per_pairing(self) -> int: ...
    @property
    def duplicate_deals(self) -> bool: ...
    @property
    def seed(self) -> str: ...
    @property
    def format(self) -> Format: ...


def context(spec: Declaration) -> Context:
    """The rest of ``spec``'s declaration, as its format is checked and planned against."""
    return Context(tuple(spec.bots), {p.name: p.rating for p in spec.participants},
                   spec.table_size, spec.games_per_pairing, spec.duplicate_deals, MAX_GAMES)


def default_rounds(n: int, k: int) -> int:
    """Swiss rounds when the declaration gives none: log_k(n) rounded up, the fewest
    after which a bot winning every table is alone on top, plus 2, because a stronger
    bot loses some games at Chinchón (docs/benchmarks.md measures it); at most
    :func:`max_rounds`."""
    needed = math.ceil(math.log(n) / math.log(k) - 1e-9) if n > 1 else 1
    return max(1, min(max_rounds(n, k), needed + 2))


def max_rounds(n: int, k: int) -> int:
    """Most Swiss rounds: at tables of 2, every bot can meet a new opponent (or sit out
    once) each round; at larger tables, MAX_ROUNDS."""
    if k == 2:
        return min(MAX_ROUNDS, n if n % 2 else n - 1)
    return MAX_ROUNDS


def declared_games(stage: Stage, ctx: Context) -> int:
    """Games per table the stage declares (its own, or the tournament's)."""
    return stage.games_per_pairing or ctx.games_per_pairing


def rotation_games(stage: Stage, ctx: Context) -> int:
    """The declared games per table, rounded up to whole seat rotations."""
    return math.ceil(declared_games(stage, ctx) / ctx.table_size) * ctx.table_size


def match_duplicate(stage: Stage, ctx: Context) -> bool:
    m = stage.match.duplicate_deals
    return ctx.duplicate_deals if m is None else m


def sizes(fmt: Format, n: int) -> list[int]:
    """Bots in each stage."""
    out = [n]
    for s in fmt.stages[:-1]:
        out.append(s.advance or 0)
    return out


# -- TOML ----------------------------------------------------------------------------------


_STAGE_KEYS = {f.name for f in fields(Stage)}
_MATCH_KEYS = {f.name for f in fields(MatchSpec)}


def from_toml(value: object) -> Format:
    """The format of a TOML ``format`` value (a kind's name, a stage's table, or a table
    of ``stages``); FormatError naming the field."""
    if isinstance(value, str):
        return Format((Stage(_enum(Kind, value, "format")),))
    if not isinstance(value, dict):
        raise FormatError(f"format: a format's name ({', '.join(k.value for k in Kind)}) or "
                          f"a table, got {shown(value)}")
    if "stages" not in value:
        return Format((_stage(value, "format"),))
    extra = sorted(set(value) - {"stages"})
    if extra:
        raise FormatError(f"format.{extra[0]}: with stages, each stage holds its own fields")
    stages = value["stages"]
    if not isinstance(stages, list) or not stages:
        raise FormatError("format.stages: a list of [[format.stages]] tables")
    if len(stages) > MAX_STAGES:
        raise FormatError(f"format.stages: 1 to {MAX_STAGES} stages, got {len(stages)}")
    return Format(tuple(_stage(d, f"format.stages[{i}]") for i, d in enumerate(stages)))


def _stage(d: object, where: str) -> Stage:
    if not isinstance(d, dict):
        raise FormatError(f"{where}: a table of the stage's fields")
    unknown = sorted(set(d) - _STAGE_KEYS)
    if unknown:
        raise FormatError(f"{where}.{unknown[0]}: unknown field; the fields are "
                          f"{', '.join(sorted(_STAGE_KEYS))}")
    if "kind" not in d:
        raise FormatError(f"{where}.kind: every stage needs its kind "
                          f"({', '.join(k.value for k in Kind)})")
    given: dict[str, Any] = {"kind": _enum(Kind, d["kind"], f"{where}.kind")}
    for key, v in d.items():
        at = f"{where}.{key}"
        if key in ("name",):
            given[key] = _str(v, at)
        elif key in ("advance", "games_per_pairing", "groups", "rounds"):
            given[key] = _int(v, at)
        elif key == "bye_points":
            given[key] = _number(v, at)
        elif key in ("third_place", "grand_final_reset"):
            given[key] = _bool(v, at)
        elif key == "seeding":
            given[key] = _enum(Seeding, v, at)
        elif key in ("seeds", "challengers"):
            given[key] = tuple(_str(x, at) for x in _list(v, at))
        elif key == "tiebreaks":
            try:
                given[key] = tb.parse(_list(v, at), at)
            except ValueError as e:
                raise FormatError(str(e)) from None
        elif key == "match":
            given[key] = _match(v, at)
    return Stage(**given)


def _match(d: object, where: str) -> MatchSpec:
    if not isinstance(d, dict):
        raise FormatError(f"{where}: a table of {', '.join(sorted(_MATCH_KEYS))}")
    unknown = sorted(set(d) - _MATCH_KEYS)
    if unknown:
        raise FormatError(f"{where}.{unknown[0]}: unknown field; the fields are "
                          f"{', '.join(sorted(_MATCH_KEYS))}")
    given: dict[str, Any] = {}
    for key, v in d.items():
        at = f"{where}.{key}"
        if key == "mode":
            given[key] = _enum(MatchMode, v, at)
        elif key == "duplicate_deals":
            given[key] = _bool(v, at)
        else:
            given[key] = _int(v, at)
    return MatchSpec(**given)


def to_toml(fmt: Format) -> dict[str, Any] | None:
    """``fmt`` as the TOML value :func:`from_toml` reads back (None: the default, which a
    declaration leaves out)."""
    if fmt == Format():
        return None
    stages = [_stage_dict(s) for s in fmt.stages]
    return stages[0] if len(stages) == 1 else {"stages": stages}


def _stage_dict(s: Stage) -> dict[str, Any]:
    blank = Stage(s.kind)
    out: dict[str, Any] = {"kind": s.kind.value}
    for f in fields(Stage):
        v = getattr(s, f.name)
        if f.name == "kind" or v == getattr(blank, f.name):
            continue
        if f.name == "match":
            out["match"] = {g.name: _plain(getattr(v, g.name)) for g in fields(MatchSpec)
                            if getattr(v, g.name) != getattr(MatchSpec(), g.name)}
        else:
            out[f.name] = _plain(v)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _enum(kind: type[enum.StrEnum], v: object, where: str) -> Any:
    try:
        return kind(_str(v, where))
    except ValueError:
        raise FormatError(f"{where}: {shown(v)} is not one of "
                          f"{', '.join(m.value for m in kind)}") from None


def _int(v: object, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise FormatError(f"{where}: must be a whole number, got {shown(v)}")
    return v


def _number(v: object, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise FormatError(f"{where}: must be a number, got {shown(v)}")
    return float(v)


def _bool(v: object, where: str) -> bool:
    if not isinstance(v, bool):
        raise FormatError(f"{where}: must be true or false, got {shown(v)}")
    return v


def _str(v: object, where: str) -> str:
    if not isinstance(v, str):
        raise FormatError(f"{where}: must be a string, got {shown(v)}")
    return v


def _list(v: object, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise FormatError(f"{where}: must be a list, got {shown(v)}")
    return v


