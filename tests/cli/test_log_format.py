"""``--log-format auto`` (the default): text lines when stderr is a terminal, JSON lines
otherwise; ``json`` and ``text`` force one. Real ``chinchon serve`` processes, with stderr
on a pseudo-terminal or a pipe; the first log line is the warning about a token given on
the command line, written before the server listens."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chinchon_referee.logs import LogFormat, configure

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "admin-token-for-log-format-tests"


def _first_log_line(tmp_path: Path, tty: bool, *extra: str) -> str:
    cmd = [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
           "--db", str(tmp_path / "ref.sqlite3"), "--admin-token", ADMIN, *extra]
    if tty:
        master, slave = pty.openpty()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
        os.close(slave)
        fd = master
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                cwd=ROOT)
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
    buf = b""
    try:
        deadline = time.monotonic() + 60
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            assert left > 0, f"no log line in 60 s: {buf!r}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                assert chunk, f"stderr closed before a log line: {buf!r}"
                buf += chunk
    finally:
        proc.kill()
        proc.wait(60)
        if tty:
            os.close(master)
    return buf.split(b"\n")[0].decode().rstrip("\r")


def _is_json(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


@pytest.mark.parametrize(
    ("tty", "extra", "want_json"),
    [
        (True, (), False),  # auto on a terminal: text
        (False, (), True),  # auto into a pipe or file: JSON
        (True, ("--log-format", "json"), True),
        (False, ("--log-format", "text"), False),
        (True, ("--log-format", "auto"), False),
    ],
)
def test_serve_log_format(tmp_path: Path, tty: bool, extra: tuple[str, ...],
                          want_json: bool) -> None:
    line = _first_log_line(tmp_path, tty, *extra)
    assert "token_on_command_line" in line, line
    assert _is_json(line) is want_json, line
    if want_json:
        assert json.loads(line)["event"] == "token_on_command_line"
    else:
        assert " warning " in line and not line.startswith("{"), line


def test_serve_refuses_an_unknown_log_format(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--log-format", "xml",
         "--db", str(tmp_path / "ref.sqlite3")],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert proc.returncode == 2 and "--log-format" in proc.stderr, proc.stderr
    assert not (tmp_path / "ref.sqlite3").exists()


def test_configure_names_the_field_of_a_bad_format() -> None:
    with pytest.raises(ValueError, match="log format: 'xml'"):
        configure("info", "xml")
    assert [f.value for f in LogFormat] == ["auto", "json", "text"]


def test_grpc_core_lines_go_through_the_json_log(tmp_path: Path) -> None:
    """gRPC's C core writes its own lines to stderr (a failed TLS handshake): with
    ``--log-format json`` they reach the log as JSON objects like every other line
    (logger ``chinchon.grpc``), not as plain text among them."""
    import socket

    from tests.support.admin import make_certs
    from tests.support.serve import Serve, free_port
    from tests.support.waits import until_sync

    _, cert, key = make_certs(tmp_path)
    port = free_port()
    serve = Serve(tmp_path, port, tmp_path / "ref.sqlite3", 0,
                  ["--tls-cert", str(cert), "--tls-key", str(key), "--log-format", "json",
                   "--log-level", "info"])
    try:
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"\x16\x03\x01\x00\x05hello")  # not a TLS client hello

        def core_line() -> list[dict[str, object]]:
            lines = serve.err.read_text(encoding="utf-8").splitlines()
            return [json.loads(x) for x in lines if "Handshake failed" in x]

        until_sync(core_line, "gRPC's handshake line in the log", 30)
    finally:
        serve.stop()
    lines = serve.err.read_text(encoding="utf-8").splitlines()
    assert lines and all(json.loads(x)["ts"] for x in lines), lines  # every line is JSON
    (line,) = core_line()
    assert line["logger"] == "chinchon.grpc" and line["event"] == "grpc_core"
    assert str(line["where"]).startswith("ssl_transport_security")
