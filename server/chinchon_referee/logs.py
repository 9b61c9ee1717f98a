"""Structured logs on stderr: text lines for a person at a terminal, one JSON object per
line for a machine (``--log-format auto``, the default, picks by whether stderr is a
terminal; ``--log-format json`` / ``text`` force one).

    log = get_logger("referee")
    log.info("game_started", game_id=gid, players=names)
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
from enum import StrEnum
from typing import Any


class LogFormat(StrEnum):
    AUTO = "auto"  # text when the stream is a terminal, JSON otherwise
    JSON = "json"
    TEXT = "text"

    def resolve(self, stream: Any) -> LogFormat:
        """JSON or TEXT: what ``AUTO`` means for ``stream``."""
        if self is not LogFormat.AUTO:
            return self
        isatty = getattr(stream, "isatty", None)
        try:
            return LogFormat.TEXT if callable(isatty) and isatty() else LogFormat.JSON
        except ValueError:  # a closed stream
            return LogFormat.JSON


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if fields:
            out.update(fields)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None) or {}
        kv = " ".join(f"{k}={v}" for k, v in fields.items())
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        line = f"{stamp} {record.levelname.lower():7} {record.name}: {record.getMessage()} {kv}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line.rstrip()


class EventLogger:
    """A thin wrapper: ``log.info(event, **fields)``."""

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(f"chinchon.{name}")

    def _emit(self, level: int, event: str, fields: dict[str, Any], exc: bool = False) -> None:
        if self._log.isEnabledFor(level):
            self._log.log(level, event, extra={"fields": fields}, exc_info=exc)

    def debug(self, event: str, **fields: Any) -> None:
        self._emit(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._emit(logging.ERROR, event, fields, exc=True)


def get_logger(name: str) -> EventLogger:
    return EventLogger(name)


#: A line of gRPC's C core (absl's format): "I1201 21:43:00.737020   25383 file.cc:12] text".
_NATIVE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ ([^\]\s]+)\] ?(.*)$")
_NATIVE_LEVELS = {"I": logging.INFO, "W": logging.WARNING, "E": logging.ERROR,
                  "F": logging.CRITICAL}


def route_native_stderr() -> None:
    """Route what C libraries (gRPC's core: failed TLS handshakes...) write to file
    descriptor 2 through the log, so that a JSON log holds only JSON lines: fd 2 becomes
    a pipe read by a thread that logs each line (logger ``chinchon.grpc``, event
    ``grpc_core``, its level and source place), and Python's ``sys.stderr`` (and so the
    log itself) keeps the real stderr. For ``chinchon serve`` (a process of its own)."""
    real = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    sys.stderr = os.fdopen(real, "w", buffering=1, encoding="utf-8", errors="replace")
    for handler in logging.getLogger("chinchon").handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sys.stderr)
    log = logging.getLogger("chinchon.grpc")

    def forward() -> None:
        with os.fdopen(read_end, "rb") as pipe:
            for raw in pipe:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if not line.strip():
                    continue
                m = _NATIVE.match(line)
                level = _NATIVE_LEVELS[m.group(1)] if m else logging.WARNING
                fields = ({"where": m.group(2), "text": m.group(3)} if m else {"text": line})
                log.log(level, "grpc_core" if m else "native_stderr",
                        extra={"fields": fields})

    threading.Thread(target=forward, name="native-stderr", daemon=True).start()


#: The level and the format (resolved: JSON or text) of the last ``configure``.
_configured: tuple[str, LogFormat] = ("info", LogFormat.JSON)


def configured() -> tuple[str, str]:
    """The level and format (``json`` or ``text``) the logs were configured with: a
    child process that writes to the same stream logs alike."""
    return _configured[0], _configured[1].value


def configure(level: str = "info", fmt: LogFormat | str = LogFormat.AUTO,
              stream: Any = None) -> None:
    global _configured
    try:
        chosen = LogFormat(fmt)
    except ValueError:
        raise ValueError(f"log format: {fmt!r} is not one of "
                         f"{', '.join(f.value for f in LogFormat)}") from None
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    json_lines = chosen.resolve(stream) is LogFormat.JSON
    _configured = (level.lower(), LogFormat.JSON if json_lines else LogFormat.TEXT)
    handler.setFormatter(_JsonFormatter() if json_lines else _TextFormatter())
    root = logging.getLogger("chinchon")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
