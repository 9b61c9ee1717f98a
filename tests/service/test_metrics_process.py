"""The metrics endpoint's own process (``chinchon serve --metrics``): the connections a
scraper opens are held by it, not by the referee; its bounds (connections: 503 past
them; rate per client: 429 with Retry-After); started again when killed; gone, with its
directory, when the referee stops."""

from __future__ import annotations

import json
import os
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.serve import Serve, free_port
from tests.support.waits import until_sync


def _event(server: Serve, kind: str) -> dict[str, Any]:
    return next(json.loads(x) for x in server.out.read_text().splitlines()
                if x.startswith("{") and json.loads(x).get("event") == kind)


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(d.name))
    return out


def _metrics_children(pid: int) -> list[int]:
    out = []
    for c in _children(pid):
        try:
            if b"metrics_process" in Path(f"/proc/{c}/cmdline").read_bytes():
                out.append(c)
        except OSError:
            continue
    return out


def _holders(server_port: int, client_port: int, pids: list[int]) -> list[int]:
    """Which of ``pids`` hold the accepted end of the connection 127.0.0.1:client_port
    -> 127.0.0.1:server_port (none before it is accepted)."""
    inode = ""
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        cols = row.split()
        local, remote = cols[1], cols[2]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
            inode = cols[9]
    if inode in ("", "0"):
        return []
    out = []
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == f"socket:[{inode}]":
                    out.append(pid)
                    break
            except OSError:
                continue
    return out


def _get(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(30)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def test_the_endpoint_is_served_by_another_process_within_its_bounds(tmp_path: Path) -> None:
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "m.sqlite3", 1,
                   ["--metrics", "127.0.0.1:0", "--metrics-max-connections", "2",
                    "--metrics-client-rate", "0.01"])
    try:
        referee = server.proc.pid
        scrape = _event(server, "metrics")
        child = scrape["pid"]
        assert child != referee and _metrics_children(referee) == [child]
        # A connection to the endpoint is accepted by the child, never by the referee
        # (which holds the listening socket only, to hand it to a restarted child).
        held = []
        for _ in range(2):
            c = socket.create_connection(("127.0.0.1", scrape["port"]))
            held.append(c)
            mine = c.getsockname()[1]
            until_sync(lambda m=mine: _holders(scrape["port"], m, [referee, child]),
                       "the connection was not accepted", 30)
            assert _holders(scrape["port"], mine, [referee, child]) == [child]
        # Past the connection bound: refused at once.
        with socket.create_connection(("127.0.0.1", scrape["port"])) as extra:
            assert _answer(extra).startswith(b"HTTP/1.1 503 ")
        for c in held:
            c.close()
        # Past the rate (0.01 a second, a burst of one): 429 with Retry-After.
        until_sync(lambda: _get(scrape["url"])[0] == 200, "no scrape answered", 30)
        code, headers = _get(scrape["url"])
        assert code == 429 and int(headers["Retry-After"]) >= 1
    finally:
        server.stop()


def test_a_killed_metrics_process_is_started_again_and_ends_with_the_referee(
    tmp_path: Path,
) -> None:
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "m.sqlite3", 1,
                   ["--metrics", "127.0.0.1:0", "--metrics-client-rate", "1000"])
    try:
        referee = server.proc.pid
        scrape = _event(server, "metrics")
        first = scrape["pid"]
        directory = next(Path(x) for x in Path(f"/proc/{first}/cmdline").read_bytes()
                         .decode().split("\0") if "chinchon-metrics-" in x)
        assert directory.is_dir() and directory.stat().st_mode & 0o777 == 0o700
        assert _get(scrape["url"])[0] == 200
        os.kill(first, signal.SIGKILL)
        until_sync(lambda: [p for p in _metrics_children(referee) if p != first],
                   "the metrics process was not started again", 60)
        until_sync(lambda: _get(scrape["url"])[0] == 200, "the endpoint did not come back", 60)
        (second,) = _metrics_children(referee)
        assert second != first
    finally:
        server.stop()
    assert server.proc.returncode == 0
    assert not Path(f"/proc/{second}").exists() or b"Z" in Path(f"/proc/{second}/stat").read_bytes()
    assert not directory.exists()
