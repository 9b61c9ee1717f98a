"""The protobuf spelling of a format: ``chinchon.v1.TournamentFormat`` <-> :class:`.Format`.

As everywhere in the model's codecs, an unset field takes the model's default and a
set one (0 included) is checked like any other value; the names of the enums' values
are the TOML spellings, upper-cased behind their prefix (``STAGE_KIND_SWISS`` is
``swiss``).
"""

from __future__ import annotations

import enum
from typing import Any, cast

from chinchon.v1 import tournament_pb2 as tpb

from ..tiebreaks import Tiebreak
from .spec import Format, FormatError, Kind, MatchMode, MatchSpec, Seeding, Stage


def _names(kind: type[enum.StrEnum], prefix: str) -> dict[Any, int]:
    return {m: tpb.DESCRIPTOR.enum_types_by_name[prefix].values_by_name[
        f"{_upper(prefix)}_{m.value.upper()}"].number for m in kind}


def _upper(camel: str) -> str:
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(camel)).upper()


_KIND = _names(Kind, "StageKind")
_SEEDING = _names(Seeding, "Seeding")
_MODE = _names(MatchMode, "MatchMode")
_TIEBREAK = _names(Tiebreak, "Tiebreak")


def _back(table: dict[Any, int], value: int, where: str) -> Any:
    for k, v in table.items():
        if v == value:
            return k
    raise FormatError(f"{where}: unknown value {value}")


def format_from_proto(msg: tpb.TournamentFormat) -> Format:
    """The format of ``msg`` (no stage: the default round-robin); FormatError naming
    the field."""
    if not msg.stages:
        return Format()
    many = len(msg.stages) > 1
    return Format(tuple(_stage(s, f"format.stages[{i}]" if many else "format")
                        for i, s in enumerate(msg.stages)))


def _stage(s: tpb.Stage, where: str) -> Stage:
    if s.kind == tpb.STAGE_KIND_UNSPECIFIED:
        raise FormatError(f"{where}.kind: every stage needs its kind "
                          f"({', '.join(k.value for k in Kind)})")
    given: dict[str, Any] = {"kind": _back(_KIND, s.kind, f"{where}.kind"), "name": s.name,
                             "seeds": tuple(s.seeds), "challengers": tuple(s.challengers)}
    for key in ("advance", "games_per_pairing", "groups", "rounds", "bye_points", "third_place",
                "grand_final_reset"):
        if s.HasField(key):
            given[key] = getattr(s, key)
    if s.seeding != tpb.SEEDING_UNSPECIFIED:
        given["seeding"] = _back(_SEEDING, s.seeding, f"{where}.seeding")
    tiebreaks = []
    for t in s.tiebreaks:
        tie = _back(_TIEBREAK, t, f"{where}.tiebreaks")
        if tie in tiebreaks:
            raise FormatError(f"{where}.tiebreaks: {tie.value} is listed twice")
        tiebreaks.append(tie)
    given["tiebreaks"] = tuple(tiebreaks)
    if s.HasField("match"):
        m = s.match
        chosen: dict[str, Any] = {k: getattr(m, k) for k in ("games", "extra_games",
                                                              "sudden_death", "duplicate_deals")
                                  if m.HasField(k)}
        if m.mode != tpb.MATCH_MODE_UNSPECIFIED:
            chosen["mode"] = _back(_MODE, m.mode, f"{where}.match.mode")
        given["match"] = MatchSpec(**chosen)
    return Stage(**given)


def format_to_proto(fmt: Format) -> tpb.TournamentFormat:
    """``fmt`` as a message :func:`format_from_proto` reads back to an equal format
    (the default: no stage)."""
    if fmt == Format():
        return tpb.TournamentFormat()
    return tpb.TournamentFormat(stages=[_stage_msg(s) for s in fmt.stages])


def _stage_msg(s: Stage) -> tpb.Stage:
    """Its fields that differ from the defaults, set."""
    msg = tpb.Stage(name=s.name, seeds=list(s.seeds), challengers=list(s.challengers))
    msg.kind = _KIND[s.kind]  # type: ignore[assignment]
    msg.tiebreaks.extend(_TIEBREAK[t] for t in s.tiebreaks)  # type: ignore[misc]
    blank = Stage(s.kind)
    for key in ("advance", "games_per_pairing", "groups", "rounds", "bye_points",
                "third_place", "grand_final_reset"):
        v = getattr(s, key)
        if v is not None and v != getattr(blank, key):
            setattr(msg, key, v)
    if s.seeding is not None:
        msg.seeding = _SEEDING[s.seeding]  # type: ignore[assignment]
    m = s.match
    if m != MatchSpec():
        msg.match.SetInParent()
        for key in ("games", "extra_games", "sudden_death", "duplicate_deals"):
            v = getattr(m, key)
            if v is not None and v != getattr(MatchSpec(), key):
                setattr(msg.match, key, v)
        if m.mode is not MatchMode.BEST_OF:
            msg.match.mode = _MODE[m.mode]  # type: ignore[assignment]
    return msg


def tiebreak_to_proto(t: Tiebreak) -> tpb.Tiebreak:
    """A tie-break as ``chinchon.v1.Tiebreak`` (``GetStandings``' order)."""
    return cast(tpb.Tiebreak, tpb.Tiebreak.Value(f"TIEBREAK_{t.value.upper()}"))
