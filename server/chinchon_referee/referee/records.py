"""A game record's pieces the referee adds, and records and results to the wire."""

from __future__ import annotations

from typing import Any

from chinchon.v1 import game_pb2 as g
from chinchon.v1 import record_pb2 as r
from chinchon.wire import duration
from google.protobuf import json_format

from .spec import GameSpec


def terms(spec: GameSpec) -> dict[str, Any]:
    """The record's ``timeControl`` and ``policies``: what the bots played under."""
    tc, pol = spec.time_control, spec.policies
    return {
        "timeControl": json_format.MessageToDict(g.TimeControl(
            per_move=duration(tc.per_move), bank=duration(tc.bank))),
        "policies": json_format.MessageToDict(g.Policies(
            max_illegal_retries=pol.max_illegal_retries, max_strikes=pol.max_strikes,
            reconnect_grace=duration(pol.reconnect_grace))),
    }


def result_to_wire(result: dict[str, Any]) -> g.GameResult:
    return json_format.ParseDict(result, g.GameResult())


def record_to_wire(record: dict[str, Any]) -> r.GameRecord:
    return json_format.ParseDict(record, r.GameRecord())

