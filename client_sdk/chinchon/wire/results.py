"""Results and records on the wire: the engine's :class:`~chinchon.engine.Outcome` as a
``chinchon.v1.GameResult``, the referee's terms in a record, and a record document as a
``chinchon.v1.GameRecord``.

A record document is the JSON mapping of ``GameRecord`` (``chinchon.engine.record``
writes it with the standard library only). :func:`record_from_json` is the one place
where such a document becomes a message: protobuf's own JSON parser reads it, so the
mapping's rules (names, enums, durations) are protobuf's, not ours.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from chinchon.engine import GameEnd, Outcome, Termination
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import record_pb2 as r

_END_PREFIX = "GAME_END_KIND_"


def outcome_to_wire(o: Outcome) -> g.GameResult:
    msg = g.GameResult(
        end=_END_PREFIX + (o.end.name if o.end is not None else "UNSPECIFIED"),
        termination=o.termination.value,
        winners=o.winners,
        totals=o.totals,
        hands_played=o.hands_played,
        summary=o.summary,
    )
    if o.forfeited is not None:
        msg.forfeited_seat = o.forfeited
    return msg


def outcome_from_wire(msg: g.GameResult) -> Outcome:
    return Outcome(
        termination=Termination(g.Termination.Name(msg.termination)),
        end=GameEnd.__members__.get(g.GameEndKind.Name(msg.end).removeprefix(_END_PREFIX)),
        winners=tuple(msg.winners),
        totals=tuple(msg.totals),
        hands_played=msg.hands_played,
        summary=msg.summary,
        forfeited=msg.forfeited_seat if msg.HasField("forfeited_seat") else None,
    )


def duration_json(seconds: float) -> str:
    """``seconds`` in the JSON mapping of ``google.protobuf.Duration`` ("1.500s", "5s")."""
    nanos = max(0, int(seconds * 1e9))  # as :func:`.convert.duration` counts
    whole, frac = divmod(nanos, 1_000_000_000)
    if not frac:
        return f"{whole}s"
    digits = 3 if frac % 1_000_000 == 0 else 6 if frac % 1_000 == 0 else 9
    return f"{whole}.{frac // 10 ** (9 - digits):0{digits}d}s"


def terms_json(per_move: float, bank: float, max_illegal_retries: int, max_strikes: int,
               reconnect_grace: float) -> dict[str, Any]:
    """A record's ``timeControl`` and ``policies`` (what the bots played under), as the
    JSON mapping writes them (every field is set)."""
    return {
        "timeControl": {"perMove": duration_json(per_move), "bank": duration_json(bank)},
        "policies": {"maxIllegalRetries": max_illegal_retries, "maxStrikes": max_strikes,
                     "reconnectGrace": duration_json(reconnect_grace)},
    }


def record_from_json(doc: dict[str, Any]) -> r.GameRecord:
    """A record document as the message (:class:`json_format.ParseError` if it is not one)."""
    return json_format.ParseDict(doc, r.GameRecord())


__all__ = ["duration_json", "outcome_from_wire", "outcome_to_wire", "record_from_json",
           "terms_json"]
