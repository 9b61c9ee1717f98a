"""The messages the referee processes sharing a database tell each other over the bus
(PostgreSQL ``NOTIFY``, storage/bus.py), as types, and their one codec.

A message is JSON with short keys (a ``NOTIFY`` payload is under 8000 bytes): ``o`` the
sending process, ``k`` its kind, and for an event ``t`` the tournament, ``m`` the
sentence, ``g`` the game, ``ts`` the time, ``p`` the game's players, ``s`` the
tournament's status, ``r`` the game's result; for ``voided``, ``n`` the games voided.
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chinchon.engine import Outcome

from ..vocabulary import TournamentStatus


class Kind(enum.StrEnum):
    """What a message tells."""

    #: A tournament's event (a game started or ended, a status, a sentence).
    EVENT = "event"
    #: Tournaments were declared, started or cancelled: read them again.
    TOURNAMENTS = "tournaments"
    #: The registered bots changed (a token added, rotated, revoked): read them again.
    BOTS = "bots"
    #: The sender voided games: the runs read their scheduled games again.
    VOIDED = "voided"
    #: This process's own: the bus was lost a while (never sent).
    RECONCILE = "reconcile"


@dataclass(frozen=True)
class BusEvent:
    """A tournament's event, as told to the other processes."""

    tournament: str
    message: str
    game_id: str = ""
    status: TournamentStatus | None = None
    result: Outcome | None = None
    players: tuple[str, ...] = ()
    time: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Message:
    """One message of the bus."""

    owner: str
    kind: Kind
    event: BusEvent | None = None
    voided: int = 0

    def __post_init__(self) -> None:
        if (self.kind is Kind.EVENT) != (self.event is not None):
            raise ValueError("an event message carries its event, and only it does")


def encode(msg: Message) -> str:
    out: dict[str, Any] = {"o": msg.owner, "k": msg.kind.value}
    ev = msg.event
    if ev is not None:
        out.update(t=ev.tournament, m=ev.message, g=ev.game_id, ts=ev.time, p=list(ev.players),
                   s=ev.status.value if ev.status is not None else None,
                   r=ev.result.to_json() if ev.result is not None else None)
    if msg.voided:
        out["n"] = msg.voided
    return json.dumps(out, separators=(",", ":"))


def decode(payload: str) -> Message:
    """The message of ``payload``; ValueError if it is not one (of another version, say)."""
    raw = json.loads(payload)
    if not isinstance(raw, dict):
        raise ValueError("not a message")
    try:
        kind = Kind(str(raw.get("k")))
        owner = str(raw["o"])
        event = _event(raw) if kind is Kind.EVENT else None
        voided = int(raw.get("n") or 0)
    except (KeyError, TypeError) as e:
        raise ValueError(f"an unreadable {raw.get('k')!r} message: {e}") from None
    return Message(owner, kind, event, voided)


def _event(raw: dict[str, Any]) -> BusEvent:
    status = TournamentStatus(str(raw["s"])) if raw.get("s") else None
    result = Outcome.from_json(raw["r"]) if isinstance(raw.get("r"), dict) else None
    when = raw.get("ts")
    listed = raw.get("p")
    players: Sequence[object] = listed if isinstance(listed, list) else ()
    return BusEvent(str(raw["t"]), str(raw["m"]), str(raw.get("g") or ""), status, result,
                    tuple(str(p) for p in players),
                    float(when) if isinstance(when, int | float) else time.time())
