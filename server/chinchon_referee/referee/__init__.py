"""The referee: plays games between bots connected over gRPC streams (and house bots).

From the wire inwards: ``servicer`` (the gRPC face) opens a ``connection`` per Play
stream (its writes bounded by the per-loop helpers of ``timers``); the ``lobby`` holds
idle streams and the seats of bots that dropped; the ``runner`` plays one game on its
``seats``; the ``referee`` ties them together (no-shows, aborts, shutdown); ``practice``
runs practice sessions. docs/architecture.md has the whole map.
"""

from .connection import Connection
from .errors import Disconnected, Forfeit, ShuttingDown, TimedOut
from .incidents import Incident, IncidentKind, IncidentSink
from .lobby import Lobby
from .practice_sessions import PracticeRoom
from .referee import GameListener, Referee
from .runner import DecisionCount, FaultHook, GameRunner, GameServices
from .seats import Seat, SeatStats
from .servicer import RefereeServicer
from .spec import GameOutcome, GameSpec
from .timers import Deadlines, WriteGate, WriteWatch

__all__ = [
    "Connection", "DecisionCount", "Deadlines", "Disconnected", "FaultHook", "Forfeit",
    "GameListener", "GameOutcome", "GameRunner", "GameServices", "GameSpec", "Incident",
    "IncidentKind", "IncidentSink", "Lobby",
    "PracticeRoom", "Referee", "RefereeServicer", "Seat", "SeatStats", "ShuttingDown",
    "TimedOut", "WriteGate", "WriteWatch",
]
