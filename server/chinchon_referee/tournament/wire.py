"""The protobuf codec of the tournament model: ``chinchon.v1.TournamentSpec`` <->
:class:`~.tournament.TournamentSpec` (``CreateTournament``).

A field left unset takes the model's default, exactly as a field left out of a TOML
declaration does (docs/tournaments.md lists both spellings); a field set, 0 included,
is checked by the model like any other value. Durations are ``google.protobuf.Duration``
here and seconds in the model, converted to the nearest nanosecond.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from chinchon.engine import RuleSet, RuleSetError
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.wire import rules_from_wire, rules_to_wire
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from ..config import Policies, TimeControl
from .formats.proto import format_from_proto, format_to_proto
from .formats.spec import Format
from .model import Participant, SpecError, StartMode, TournamentSpec

_START_TO_WIRE = {
    StartMode.MANUAL: tpb.TOURNAMENT_START_MANUAL,
    StartMode.WHEN_CONNECTED: tpb.TOURNAMENT_START_WHEN_CONNECTED,
    StartMode.NOW: tpb.TOURNAMENT_START_NOW,
}
_START_FROM_WIRE = {v: k for k, v in _START_TO_WIRE.items()}


def _seconds(d: Duration) -> float:
    return d.ToNanoseconds() / 1e9


def _duration(seconds: float) -> Duration:
    d = Duration()
    d.FromNanoseconds(round(seconds * 1e9))
    return d


def spec_from_proto(msg: tpb.TournamentSpec) -> TournamentSpec:
    """The model of ``msg``; SpecError naming the field if it is not a valid one."""
    given: dict[str, Any] = {}
    # Unset: the model's default; set (even to 0): checked like any other value.
    for key in ("table_size", "games_per_pairing", "concurrency", "duplicate_deals"):
        if msg.HasField(key):
            given[key] = getattr(msg, key)
    table_size = given.get("table_size", TournamentSpec.table_size)
    try:
        base = rules_from_wire(msg.rules) if msg.HasField("rules") else RuleSet()
        # players follows table_size (the message's own players is ignored, as documented)
        rules = base.replace(players=table_size)
    except RuleSetError as e:
        where = "table_size" if e.field == "players" else f"rules.{e.field}"
        raise SpecError(f"{where}: {e.message}") from None
    # A bad time control or policy: the settings' own FieldError (a SpecError).
    tc, pol = TimeControl(), Policies()
    if msg.HasField("time_control"):
        t = msg.time_control
        tc = TimeControl(**{k: _seconds(getattr(t, k)) for k in ("per_move", "bank")
                            if t.HasField(k)})
    if msg.HasField("policies"):
        p = msg.policies
        chosen: dict[str, Any] = {
            k: getattr(p, k) for k in ("max_illegal_retries", "max_strikes") if p.HasField(k)}
        chosen.update({k: _seconds(getattr(p, k)) for k in ("reconnect_grace", "absence_limit")
                       if p.HasField(k)})
        pol = Policies(**chosen)
    if msg.HasField("start_time"):
        if msg.start != tpb.TOURNAMENT_START_UNSPECIFIED:
            raise SpecError("start_time: give either start or start_time, not both")
        given["start"] = msg.start_time.ToDatetime(tzinfo=dt.UTC)
    elif msg.start != tpb.TOURNAMENT_START_UNSPECIFIED:
        if msg.start not in _START_FROM_WIRE:
            raise SpecError(f"start: unknown value {msg.start}")
        given["start"] = _START_FROM_WIRE[msg.start]
    elif msg.start_when_connected:  # the deprecated spelling
        given["start"] = StartMode.WHEN_CONNECTED
    if msg.seed:
        given["seed"] = msg.seed
    if msg.HasField("format"):
        given["format"] = format_from_proto(msg.format)  # a FormatError is a SpecError
    parts = tuple(Participant(p.name, p.token, tuple(p.command), p.instances,
                              p.rating if p.HasField("rating") else None)
                  for p in msg.participants)
    return TournamentSpec(name=msg.name, participants=parts, rules=rules, time_control=tc,
                          policies=pol, **given)


def spec_to_proto(spec: TournamentSpec) -> tpb.TournamentSpec:
    """``spec`` as a message that :func:`spec_from_proto` reads back to an equal model
    (every field set)."""
    msg = tpb.TournamentSpec(
        name=spec.name,
        participants=[tpb.Participant(name=p.name, token=p.token, command=list(p.command),
                                      instances=p.instances, rating=p.rating)
                      for p in spec.participants],
        rules=rules_to_wire(spec.rules),
        time_control=g.TimeControl(per_move=_duration(spec.time_control.per_move),
                                   bank=_duration(spec.time_control.bank)),
        policies=g.Policies(
            max_illegal_retries=spec.policies.max_illegal_retries,
            max_strikes=spec.policies.max_strikes,
            reconnect_grace=_duration(spec.policies.reconnect_grace),
            absence_limit=_duration(spec.policies.absence_limit),
        ),
        table_size=spec.table_size,
        games_per_pairing=spec.games_per_pairing,
        duplicate_deals=spec.duplicate_deals,
        concurrency=spec.concurrency,
        seed=spec.seed,
    )
    if spec.format != Format():
        msg.format.CopyFrom(format_to_proto(spec.format))
    if isinstance(spec.start, StartMode):
        msg.start = _START_TO_WIRE[spec.start]
    else:
        ts = Timestamp()
        ts.FromDatetime(spec.start)
        msg.start_time.CopyFrom(ts)
    return msg
