"""The record pieces the referee adds: the terms the bots played under."""

from __future__ import annotations

from typing import Any

from chinchon.wire import terms_json

from .spec import GameSpec


def terms(spec: GameSpec) -> dict[str, Any]:
    """The record's ``timeControl`` and ``policies``: what the bots played under."""
    tc, pol = spec.time_control, spec.policies
    return terms_json(tc.per_move, tc.bank, pol.max_illegal_retries, pol.max_strikes,
                      pol.reconnect_grace)
