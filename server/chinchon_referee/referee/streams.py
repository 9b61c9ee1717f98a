"""The bots' Play streams on this process, as the organizer sees them: counted by what
they are doing, and ended by the organizer (a token rotated or revoked)."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from . import Referee


@dataclass(frozen=True)
class BotStreams:
    """One bot's open streams: in all, seated in a game, idle in the lobby, and others
    (practice sessions, or still saying hello)."""

    streams: int = 0
    seated: int = 0
    idle: int = 0
    other: int = 0

    def __add__(self, o: BotStreams) -> BotStreams:
        return BotStreams(self.streams + o.streams, self.seated + o.seated,
                          self.idle + o.idle, self.other + o.other)


def stream_counts(referee: Referee) -> dict[str, BotStreams]:
    """Each connected bot's open streams on this process."""
    out: dict[str, list[int]] = {}
    for conn in list(referee.connections):
        if conn.closed.is_set():
            continue
        c = out.setdefault(conn.bot, [0, 0, 0, 0])
        c[0] += 1
        if conn.busy:
            c[1] += 1
        elif conn in referee.lobby.idle.get(conn.bot, ()):
            c[2] += 1
        else:
            c[3] += 1
    return {b: BotStreams(*c) for b, c in out.items()}


def end_streams(referee: Referee, bot: str, why: str) -> int:
    """End every stream of ``bot`` (UNAUTHENTICATED, ``why``); how many."""
    ended = 0
    for conn in list(referee.connections):
        if conn.bot == bot and not conn.closed.is_set():
            conn.abort = (grpc.StatusCode.UNAUTHENTICATED, why)
            conn.end(why)
            ended += 1
    return ended
