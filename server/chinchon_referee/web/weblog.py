"""aiohttp's (and asyncio's) own log lines in the project's log format, rate-limited.

Whatever a client sends, the log stays one line per event, in the format of the rest
(JSON or text, logs.py): a request aiohttp could not parse (an 8 kB URL, a bad
header) is ``http_bad_request`` with the peer and the error in one line, no traceback;
at most :data:`PER_WINDOW` lines of one kind per :data:`WINDOW` seconds, the next one
saying how many were left out."""

from __future__ import annotations

import logging
import time
from typing import Any

#: Seconds of one window, and lines of one kind logged in it at most.
WINDOW = 10.0
PER_WINDOW = 5
#: Characters of an error's text kept.
ERROR_TEXT = 200
#: Loggers whose lines are routed here.
ROUTED = ("aiohttp", "asyncio")


def _protocol_error(exc: BaseException | None) -> bool:
    from aiohttp.http_exceptions import HttpProcessingError

    return isinstance(exc, HttpProcessingError | ConnectionError)


class Limited(logging.Filter):
    """Rewrites a foreign record into an event of ours; drops it past the window's
    budget for its kind."""

    def __init__(self) -> None:
        super().__init__()
        self._windows: dict[str, list[float]] = {}  # kind -> [window start, count, left out]

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        template = str(record.msg)
        if template.startswith("Error handling request"):
            kind = "http_bad_request" if _protocol_error(exc) or record.levelno < logging.ERROR \
                else "http_handler_failed"
        else:
            kind = f"{record.name}_message"
        now = time.monotonic()
        w = self._windows.get(kind)
        if w is None or now - w[0] >= WINDOW:
            left_out = int(w[2]) if w is not None else 0
            if len(self._windows) > 64:
                self._windows.clear()
            w = self._windows[kind] = [now, 0, 0]
        else:
            left_out = 0
        w[1] += 1
        if w[1] > PER_WINDOW:
            w[2] += 1
            return False
        fields: dict[str, Any] = {}
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            text = template
        if kind.startswith("http_"):
            if record.args and isinstance(record.args, tuple):
                fields["peer"] = str(record.args[0])
        else:
            fields["text"] = text[:ERROR_TEXT]
        if exc is not None:
            fields["error"] = f"{type(exc).__name__}: {str(exc)[:ERROR_TEXT]}"
        if left_out:
            fields["left_out"] = left_out
        if kind != "http_handler_failed":
            record.exc_info = None  # a client's garbage: one line, no traceback
            record.exc_text = None
            if kind == "http_bad_request":
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg, record.args = kind, ()
        record.fields = fields
        return True


def route_foreign_logs(level: str = "info") -> None:
    """Send aiohttp's and asyncio's lines through the project's handler (call after
    ``logs.configure``), rate-limited."""
    ours = logging.getLogger("chinchon").handlers
    if not ours:
        return
    base = ours[0]
    stream = getattr(base, "stream", None)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(base.formatter)
    handler.addFilter(Limited())
    for name in ROUTED:
        lg = logging.getLogger(name)
        lg.handlers[:] = [handler]
        lg.setLevel(max(logging.INFO, logging.getLevelName(level.upper())))
        lg.propagate = False
