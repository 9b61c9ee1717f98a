"""What a spectator sends gets a bounded, clear answer (the threat model:
docs/security.md#a-spectator), against a real ``chinchon serve --http`` (and
``chinchon replay --view``): event streams held open and never read cannot shut other
spectators out; X-Forwarded-For is believed from a trusted proxy only; malformed
requests get short answers and one log line in the log's format; the full view's
stream is never cached; every error carries the security headers; a page of another
site (DNS rebinding) is refused."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import ADMIN
from tests.support.serve import free_port
from tests.support.tournament import CLI
from tests.support.web import ServeWeb

#: Bytes read of a stream's answer to know it was accepted (its head and a first event).
HEAD = 4096


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[ServeWeb] = []

    def start(*extra: str) -> ServeWeb:
        s = ServeWeb(tmp_path, free_port(), free_port(), tmp_path / f"r{len(started)}.sqlite3",
                     len(started), extra=extra)
        started.append(s)
        return s

    try:
        yield start
    finally:
        for s in started:
            s.stop()


def open_stream(web: ServeWeb, path: str, forwarded: str | None = None) -> tuple[socket.socket, str]:
    """A raw event stream: its status line, then nothing more is read from it."""
    s = socket.create_connection(("127.0.0.1", web.http_port), timeout=30)
    xff = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{web.http_port}\r\n{xff}\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(HEAD)
        if not chunk:
            break
        got += chunk
    return s, got.split(b"\r\n", 1)[0].decode()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read(HEAD)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_streams_held_open_never_shut_another_spectator_out(serve: Any) -> None:
    """Behind a trusted proxy, ten viewers hold 20 streams each (all
    there are) and never read them: an eleventh viewer still gets a live page (the
    viewer holding the most gives its oldest up), a viewer's 21st is refused."""
    web = serve("--trusted-proxy", "127.0.0.1")
    held: list[socket.socket] = []
    try:
        for viewer in range(10):
            for _ in range(20):
                s, status = open_stream(web, "/api/home/events", f"10.0.0.{viewer + 1}")
                assert status == "HTTP/1.1 200 OK", status
                held.append(s)
        s, status = open_stream(web, "/api/home/events", "10.0.0.1")
        held.append(s)
        assert status.startswith("HTTP/1.1 503"), status
        newcomer, status = open_stream(web, "/api/home/events", "192.0.2.7")
        held.append(newcomer)
        assert status == "HTTP/1.1 200 OK", status
        # And again: a spectator is never shut out while another holds more than it.
        for i in range(5):
            s, status = open_stream(web, "/api/home/events", f"192.0.2.{10 + i}")
            held.append(s)
            assert status == "HTTP/1.1 200 OK", (i, status)
    finally:
        for s in held:
            s.close()


def test_x_forwarded_for_is_believed_from_a_trusted_proxy_only(serve: Any) -> None:
    """Without --trusted-proxy, a header naming another address changes nothing: the
    21st stream from this address is refused, whatever each claims to come from."""
    web = serve()
    held: list[socket.socket] = []
    try:
        for i in range(20):
            s, status = open_stream(web, "/api/home/events", f"10.1.0.{i + 1}")
            assert status == "HTTP/1.1 200 OK", status
            held.append(s)
        s, status = open_stream(web, "/api/home/events", "10.1.1.1")
        held.append(s)
        assert status.startswith("HTTP/1.1 503"), status
    finally:
        for s in held:
            s.close()


def test_malformed_requests_get_short_answers_and_few_log_lines(serve: Any) -> None:
    """300 requests with an 8 kB URL are answered 400 each, and the
    log holds a few lines of them, each one JSON line (no traceback)."""
    web = serve()
    for _ in range(300):
        with socket.create_connection(("127.0.0.1", web.http_port), timeout=30) as s:
            s.sendall(b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
            assert answer.split(b"\r\n", 1)[0].endswith(b" 400 Bad Request"), answer[:200]
            assert len(answer) < 1024, len(answer)
    status, _, _ = get(web.url + "api/home")
    assert status == 200
    web.stop()
    lines = [x for x in web.err.read_text(encoding="utf-8").splitlines() if x.strip()]
    events = [json.loads(x) for x in lines]  # every line is one JSON object
    bad = [e for e in events if e.get("event") == "http_bad_request"]
    assert 1 <= len(bad) <= 20, len(bad)
    assert all("Traceback" not in x for x in lines)


def test_a_replay_view_past_any_seat_is_a_bad_request(tmp_path: Path) -> None:
    """``view=<5000 digits>`` is 400 (it was 500 with a traceback), as any seat past the
    game's."""
    rec = tmp_path / "g.json"
    subprocess.run([*CLI, "demo", "--seed", "views", "--record", str(rec)], check=True,
                   capture_output=True, timeout=60)
    gid = json.loads(rec.read_text())["gameId"]
    proc = subprocess.Popen([*CLI, "replay", str(rec), "--view", "--no-browser",
                             "--http", "127.0.0.1:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        event = json.loads(proc.stdout.readline())
        base = event["url"].rsplit("/r/", 1)[0] + f"/api/g/{gid}/replay"
        for view, want in (("9" * 5000, 400), ("99", 400), ("-1", 400), ("x", 400),
                           ("%D9%A1", 400), ("0", 200), ("all", 200)):
            status, _, body = get(f"{base}?view={view}")
            assert status == want, (view[:10], status, body[:200])
    finally:
        proc.terminate()
        proc.wait(30)


def test_errors_streams_and_host_names_are_answered_safely(serve: Any) -> None:
    """The full view's stream is ``no-store`` and varies with Authorization; errors
    carry the Content-Security-Policy and ``nosniff``; a Host header that names another
    site (a DNS-rebinding page) gets 421, this server's names are served."""
    web = serve("--admin-token", ADMIN)
    status, headers, _ = get(web.url + "api/g/no-such-game/live?view=all",
                                {"Authorization": f"Bearer {ADMIN}"})
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    assert headers["Cache-Control"] == "no-store" and headers["Vary"] == "Authorization"
    for path in ("api/g/no-such-game/record.json", "api/t/no-such/standings.json", "nowhere",
                 "api/g/x/table?view=all"):
        status, headers, _ = get(web.url + path)
        assert status in (401, 403, 404), (path, status)
        assert "default-src 'self'" in headers["Content-Security-Policy"], path
        assert headers["X-Content-Type-Options"] == "nosniff", path
    port = web.http_port
    for host, want in (("evil.example", 421), (f"evil.example:{port}", 421),
                       (f"127.0.0.1:{port}", 200), (f"localhost:{port}", 200),
                       (f"[::1]:{port}", 200)):
        status, headers, _ = get(web.url + "api/home", {"Host": host})
        assert status == want, (host, status)
        assert "default-src 'self'" in headers["Content-Security-Policy"]
