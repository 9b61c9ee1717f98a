"""The referee's exceptions: how a stream, a request or a game ends early."""

from __future__ import annotations

from chinchon.engine import Termination


class Disconnected(Exception):
    """The stream is gone (closed, cancelled, or not reading).

    ``since``: when the stream was lost with a request outstanding, the monotonic time
    that request was written (the bot's clock has been running since); otherwise None.
    """

    def __init__(self, since: float | None = None) -> None:
        super().__init__("the stream is gone")
        self.since = since


class TimedOut(Exception):
    def __init__(self, waited: float) -> None:
        super().__init__(f"no answer in {waited:.3f} s")
        self.waited = waited


class Forfeit(Exception):
    def __init__(self, seat: int, termination: Termination, why: str) -> None:
        super().__init__(why)
        self.seat = seat
        self.termination = termination
        self.why = why


class ShuttingDown(Exception):
    """The referee is shutting down: no game starts, and a game that is stopped before
    its end has no result (a tournament plays it again when it resumes)."""

