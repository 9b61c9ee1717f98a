"""Messages between the referee processes that share a PostgreSQL database: PostgreSQL's
own ``NOTIFY``/``LISTEN``, on one channel.

A message is a short text (JSON, under PostgreSQL's 8000-byte limit) sent to every
process listening, the sender included. Delivery is at most once: a process whose
listening connection drops misses what was sent meanwhile, so it is told when it
listens again (``on_reconnect``) and reads the store for what it may have missed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from .rows import StoreUnavailable

CHANNEL = "chinchon_referee"
#: PostgreSQL refuses a payload of 8000 bytes or more.
MAX_PAYLOAD = 7900
#: How often the listening thread looks whether it is asked to stop (seconds).
POLL = 0.5
#: The longest pause between two attempts to listen again after the server was lost.
MAX_BACKOFF = 2.0


def _name(role: str) -> str:
    """The bus connection's name in ``pg_stat_activity`` (the store's are
    "chinchon-referee pid N")."""
    return f"chinchon-referee pid {os.getpid()} bus {role}"


class Bus:
    def __init__(self, url: str, on_message: Callable[[str], None],
                 on_reconnect: Callable[[], None]) -> None:
        """``on_message(payload)`` and ``on_reconnect()`` are called in the listening
        thread."""
        self.url = url
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._send_lock = threading.Lock()
        self._sender: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._listen, name="bus-listener", daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        """Start listening; returns once listening (or after ``timeout`` s)."""
        self._thread.start()
        self._listening.wait(timeout)

    def publish(self, payload: str) -> None:
        """Send ``payload`` to every listening process; StoreUnavailable if the server
        cannot be reached; ValueError if it is too long."""
        if len(payload.encode()) > MAX_PAYLOAD:
            raise ValueError(f"bus message of {len(payload.encode())} bytes, over {MAX_PAYLOAD}")
        with self._send_lock:
            try:
                if self._sender is None or self._sender.broken or self._sender.closed:
                    self._sender = psycopg.connect(self.url, autocommit=True, connect_timeout=10,
                                                   application_name=_name("sender"))
                self._sender.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
            except psycopg.Error as e:
                raise StoreUnavailable(f"cannot send to the other processes: {e}") from None

    def stop(self) -> None:
        """Stop listening and close the sending connection (also when never started)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        with self._send_lock:
            if self._sender is not None:
                self._sender.close()

    def _listen(self) -> None:
        backoff, first = 0.1, True
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=10,
                                     application_name=_name("listener")) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._listening.set()
                    if not first:
                        self._on_reconnect()
                    first, backoff = False, 0.1
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=POLL):
                            self._on_message(note.payload)
            except psycopg.Error:
                self._stop.wait(backoff)
                backoff = min(MAX_BACKOFF, backoff * 2)
