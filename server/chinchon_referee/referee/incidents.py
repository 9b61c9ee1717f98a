"""Incidents: what a bot author should hear about (a protocol error, a flood, an illegal
action, a timeout, a forfeit, a game the referee aborted). The referee keeps them (a
bounded list); ``chinchon practice`` reports them, as JSON too, so each is a dict of
this shape."""

from __future__ import annotations

import enum
from typing import Any, NotRequired, Protocol, TypedDict

from .clip import clip


class IncidentKind(enum.StrEnum):
    #: A message the referee could not take (malformed, stale, not asked for ...).
    PROTOCOL = "protocol"
    #: Too many messages not asked for: the stream was ended.
    FLOOD = "flood"
    #: An illegal or malformed action (the bot may retry).
    ILLEGAL = "illegal"
    #: No answer in time: the default action was played.
    TIMEOUT = "timeout"
    #: The bot forfeited the game.
    FORFEIT = "forfeit"
    #: The referee stopped the game by an internal error (not the bot's fault).
    ABORTED = "aborted"
    #: The bot never connected (``chinchon practice``).
    CONNECT = "connect"


class Incident(TypedDict):
    """One incident: its kind, and the fields that kind has (texts clipped)."""

    kind: IncidentKind
    bot: NotRequired[str]
    game_id: NotRequired[str]
    message: NotRequired[str]
    code: NotRequired[str]
    violation: NotRequired[str]
    request_id: NotRequired[int]
    attempt: NotRequired[int]
    waited: NotRequired[float]
    allowed: NotRequired[float]
    termination: NotRequired[str]


class IncidentSink(Protocol):
    """Where incidents go: ``sink(kind, bot=..., game_id=..., ...)``."""

    def __call__(self, kind: IncidentKind, **fields: Any) -> None: ...


def make_incident(kind: IncidentKind, fields: dict[str, Any]) -> Incident:
    """An incident of ``kind`` with ``fields`` (texts clipped: they may quote a bot)."""
    out: dict[str, Any] = {"kind": kind}
    for k, v in fields.items():
        out[k] = clip(v) if isinstance(v, str) else v
    return out  # type: ignore[return-value]  # the fields are those of the kind
