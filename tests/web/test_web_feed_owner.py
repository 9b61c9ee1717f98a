"""``chinchon serve --web-feed PATH`` never takes over a live feed: a second referee
given the same path refuses to start (exit 2), naming the first one's pid, and the
first one's socket goes on serving; a socket left by a referee that died is replaced;
and a referee's stop removes the socket file only if it is still its own. Real
``chinchon serve`` processes, real sockets."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
from pathlib import Path

from tests.support.helpers import ADMIN
from tests.support.serve import Serve, free_port
from tests.support.tournament import CLI


def peer_pid(path: Path) -> int:
    """The pid of the process listening at ``path`` (its credentials, by the kernel)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(str(path))
        creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid: int = struct.unpack("3i", creds)[0]
        return pid


def test_a_second_referee_refuses_a_live_feed_naming_its_pid(tmp_path: Path) -> None:
    sock = tmp_path / "web.sock"
    first = Serve(tmp_path, free_port(), tmp_path / "one.sqlite3", 1, ["--web-feed", str(sock)])
    try:
        made = os.stat(sock).st_ino
        assert peer_pid(sock) == first.proc.pid
        second = subprocess.run(
            [*CLI, "serve", "--address", f"127.0.0.1:{free_port()}", "--db",
             str(tmp_path / "two.sqlite3"), "--admin-token", ADMIN, "--log-level", "warning",
             "--web-feed", str(sock)], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"--web-feed {sock}: another referee (pid {first.proc.pid})" in second.stderr
        # The first one's feed is untouched: the same socket file, still answering.
        assert os.stat(sock).st_ino == made and peer_pid(sock) == first.proc.pid
    finally:
        first.stop()
    assert first.proc.returncode == 0
    assert not sock.exists()  # its own: removed at its stop


def test_a_socket_left_by_a_dead_referee_is_replaced(tmp_path: Path) -> None:
    sock = tmp_path / "web.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock))  # bound, never listening, closed: what a killed referee leaves
    dead.close()
    assert sock.is_socket()
    serve = Serve(tmp_path, free_port(), tmp_path / "one.sqlite3", 1, ["--web-feed", str(sock)])
    try:
        assert peer_pid(sock) == serve.proc.pid
    finally:
        serve.stop()
    assert serve.proc.returncode == 0


def test_a_referee_s_stop_leaves_a_socket_that_is_not_its_own(tmp_path: Path) -> None:
    """The first referee's socket file is removed while it runs (by hand); a second one
    then feeds at the path. The first one's stop must not remove the second one's."""
    sock = tmp_path / "web.sock"
    first = Serve(tmp_path, free_port(), tmp_path / "one.sqlite3", 1, ["--web-feed", str(sock)])
    second = None
    try:
        sock.unlink()
        second = Serve(tmp_path, free_port(), tmp_path / "two.sqlite3", 2,
                       ["--web-feed", str(sock)])
        assert peer_pid(sock) == second.proc.pid
        first.stop()
        assert first.proc.returncode == 0
        assert sock.is_socket() and peer_pid(sock) == second.proc.pid
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert not sock.exists()
