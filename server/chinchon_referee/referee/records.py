"""The record pieces the referee adds: the terms the bots played under; what a bot sent,
as the record quotes it."""

from __future__ import annotations

from typing import Any

from chinchon.v1 import game_pb2 as g
from chinchon.wire import terms_json
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from .clip import clip
from .spec import GameSpec


def terms(spec: GameSpec) -> dict[str, Any]:
    """The record's ``timeControl`` and ``policies``: what the bots played under."""
    tc, pol = spec.time_control, spec.policies
    return terms_json(tc.per_move, tc.bank, pol.max_illegal_retries, pol.max_strikes,
                      pol.reconnect_grace)


def sent_text(raw: bytes) -> str:
    """What a bot sent as its action, for the record: the ``chinchon.v1.Action`` in
    protobuf's text format on one line (fields the referee does not know shown by
    number), or the bytes in hex when they are not an Action; clipped."""
    try:
        msg = g.Action.FromString(raw)
    except DecodeError:
        return clip(f"{len(raw)} bytes, not a chinchon.v1.Action: {raw[:120].hex()}")
    text = text_format.MessageToString(msg, as_one_line=True, print_unknown_fields=True)
    return clip(text or "(an empty Action: no kind set)")
