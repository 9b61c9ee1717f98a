"""``chinchon admin`` loads only what an admin client needs (it once took 1.8 s to
start, importing the web server, the director and the tournament runner for every
command). Each admin command is run as a process that records the modules it imported;
none of the server's heavy rooms may be among them. The time itself is a benchmark
(bench/bench_cli_start.py, docs/benchmarks.md), not a test."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

#: What an admin command never imports: the web view (and its HTTP server), the
#: director, the tournament runner (``chinchon tournament``), the gRPC services, the
#: referee, shared mode, bot processes, the event loop of the server.
FORBIDDEN = ("chinchon_referee.web", "chinchon_referee.director", "chinchon_referee.cli.tournament",
             "chinchon_referee.service", "chinchon_referee.referee", "chinchon_referee.cluster",
             "chinchon_referee.launch", "chinchon_referee.cli.serve", "chinchon_referee.cli.practice",
             "aiohttp", "uvloop", "openskill", "psycopg")

#: Records ``sys.modules`` at exit, then runs the command as ``chinchon`` would.
PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from chinchon_referee.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def imported(tmp_path: Path, *args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    out = tmp_path / "modules.json"
    env = dict(os.environ, CHINCHON_ADMIN_TOKEN="admin-token-for-import-test")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True,
                          text=True, timeout=120, env=env)
    return set(json.loads(out.read_text())), proc


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


@pytest.mark.parametrize("command", [
    ["--help"], ["list"], ["watch", "t-x", "--give-up", "0"], ["standings", "t-x"],
    ["games", "t-x"], ["record", "g-x"], ["export", "t-x", "{tmp}/out"], ["bots", "list"],
    ["connected"], ["create", "{tmp}/cup.toml"],
])
def test_admin_commands_import_no_server_room(tmp_path: Path, command: list[str]) -> None:
    """Each command, run to its end (against a port nobody listens on: exit 2 after the
    call failed, every import of the command's path done)."""
    (tmp_path / "cup.toml").write_text('name = "cup"\n[[participants]]\nname = "a"\n'
                                       '[[participants]]\nname = "b"\n')
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    modules, proc = imported(tmp_path, "admin", "--target", f"127.0.0.1:{closed_port()}",
                             "--timeout", "5", *args)
    assert proc.returncode in (0, 2), proc.stderr
    if command != ["--help"]:
        assert "cannot reach the referee" in proc.stderr or "giving up" in proc.stdout, proc
    assert "chinchon_referee.cli.admin" in modules and "grpc" in modules  # the real thing
    assert heavy(modules) == [], f"admin {' '.join(command)} imported {heavy(modules)}"


def test_the_checker_sees_the_heavy_imports(tmp_path: Path) -> None:
    """The same probe on ``chinchon tournament check`` (which needs the runner's module)
    finds what it imports: the test above could not pass by seeing nothing."""
    modules, proc = imported(tmp_path, "tournament", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "chinchon_referee.cli.tournament" in heavy(modules)
    assert "chinchon_referee.director.director" in heavy(modules)


@pytest.mark.parametrize("command", [["serve", "--help"], ["tournament", "run", "--help"]])
def test_a_server_loads_the_web_view_and_the_swiss_matcher_only_when_it_uses_them(
        tmp_path: Path, command: list[str]) -> None:
    """``chinchon serve`` without ``--http`` and ``tournament run --http off`` never serve
    a page, and most tournaments are no Swiss: aiohttp (~0.35 s of CPU to import) and
    networkx (~0.25 s) are loaded where they are used, not by every server that starts
    (the suite alone starts about 200); so is prometheus_client (its exposition imports an
    HTTP server), by ``serve --metrics`` only. The probe sees the command's own module."""
    modules, proc = imported(tmp_path, *command)
    assert proc.returncode == 0, proc.stderr
    assert f"chinchon_referee.cli.{command[0]}" in modules and "grpc" in modules
    assert "chinchon_referee.director.director" in modules
    assert sorted(m for m in modules
                  if m.split(".")[0] in ("aiohttp", "networkx", "prometheus_client")) == []
    assert "chinchon_referee.web.app" not in modules and "chinchon_referee.web.spawn" not in modules
