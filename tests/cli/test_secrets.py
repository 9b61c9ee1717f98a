"""Secrets stay off command lines and out of logs; organizer tokens have a minimum length.

Real processes throughout: bots launched by ``tournament run``'s launcher and by
``chinchon practice`` record their own ``/proc/self/cmdline`` (tests/bots/argv_spy.py),
and ``chinchon serve`` runs as a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from chinchon.engine import RuleSet
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.cli import practice
from chinchon_referee.config import TimeControl
from chinchon_referee.host.processes import spawn as spawn_process
from chinchon_referee.launch.launcher import DeclaredBot, Launcher, Output

from tests.support.fixture_types import StartServer
from tests.support.helpers import RAW_BOT, BotProc, bot_token, spec

ROOT = Path(__file__).resolve().parents[2]
SPY = [sys.executable, str(ROOT / "tests" / "bots" / "argv_spy.py"), "--bot", "greedy"]


def spied(folder: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


async def test_tournament_bots_get_their_token_in_the_environment_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: StartServer,
) -> None:
    """The launcher (``chinchon tournament run``'s) puts no token on the bots' command
    lines (which every local user can read); they get it from CHINCHON_TOKEN."""
    monkeypatch.setenv("SPY_DIR", str(tmp_path))

    server = await servers(["a", "b"])
    launcher = Launcher(Output(tmp_path / "logs"), base=ROOT)
    try:
        await launcher.start(server.target, [DeclaredBot(b, tuple(SPY), bot_token(b))
                                             for b in ("a", "b")])
        # Connected: the token reached them through the environment.
        assert await server.referee.lobby.wait_all(["a", "b"], 60)
    finally:
        await launcher.stop()  # the bots end before the spies' files are read
    seen = spied(tmp_path)
    assert len(seen) == 2
    assert sorted(str(s["token"]) for s in seen) == [bot_token("a"), bot_token("b")]
    for s in seen:
        line = " ".join(s["cmdline"])  # type: ignore[arg-type]
        assert "--token" not in line and str(s["token"]) not in line, line


async def test_practice_gives_the_bot_its_token_in_the_environment_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPY_DIR", str(tmp_path))
    rep = await practice.run_practice(SPY, 1, "greedy", RuleSet(), TimeControl(5.0, 30.0),
                                      "env-only")
    assert rep.connected and rep.clean, rep.bot_stderr
    (seen,) = spied(tmp_path)
    line = " ".join(seen["cmdline"])  # type: ignore[arg-type]
    assert seen["token"] and str(seen["token"]) not in line and "--token" not in line, line


async def test_the_raw_test_bot_reads_its_token_from_the_environment(servers: StartServer) -> None:
    server = await servers(["raw"])
    proc = BotProc(await spawn_process(
        [sys.executable, RAW_BOT, "--mode", "first", "--target", server.target],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, CHINCHON_TOKEN=bot_token("raw"), PYTHONUNBUFFERED="1")))
    try:
        assert await server.referee.lobby.wait_all(["raw"], 120)
        out = await asyncio.wait_for(
            server.referee.play(spec("raw-env", ["raw", "house:greedy"])), 60)
        assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    finally:
        await proc.kill()


# -- chinchon serve ---------------------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CHINCHON_ADMIN_TOKEN"}
    env.update(extra)
    return env


class Serve:
    """``chinchon serve`` on port 0; its stdout lines up to ``listening`` are kept."""

    def __init__(self, db: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
             "--db", str(db), "--log-level", "warning", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=env or _env(),
        )
        assert self.proc.stdout is not None
        self.lines: list[str] = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"serve ended: {self.proc.stderr.read() if self.proc.stderr else ''}"
            self.lines.append(line)
            if json.loads(line)["event"] == "listening":
                self.port = int(json.loads(line)["port"])
                break

    def admin_ok(self, token: str) -> bool:
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            try:
                tpb_grpc.TournamentServiceStub(ch).ListTournaments(
                    tpb.ListTournamentsRequest(), metadata=(("authorization", f"Bearer {token}"),),
                    timeout=30)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e
                return False
        return True

    def stop(self) -> str:
        """Stop it (SIGKILL); return its stderr."""
        self.proc.kill()
        _, err = self.proc.communicate(timeout=30)
        return err


def test_a_generated_admin_token_goes_to_a_private_file_never_to_the_log(tmp_path: Path) -> None:
    db = tmp_path / "ref.sqlite3"
    srv = Serve(db)
    try:
        path = Path(f"{db}.admin-token")
        token = path.read_text(encoding="utf-8").strip()
        assert len(token) >= 16
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        (event,) = [json.loads(x) for x in srv.lines if json.loads(x)["event"] == "admin_token"]
        assert event["file"] == str(path) and "token" not in event
        assert srv.admin_ok(token) and not srv.admin_ok("x" * 20)
    finally:
        err = srv.stop()
    assert token not in "".join(srv.lines) + err
    # The next start on the same database keeps the same token (and says nothing new).
    again = Serve(db)
    try:
        assert again.admin_ok(token)
        assert not any(json.loads(x)["event"] == "admin_token" for x in again.lines)
    finally:
        again.stop()


def test_serve_takes_every_token_from_files_or_the_environment(tmp_path: Path) -> None:
    admin_file, bot_file = tmp_path / "admin", tmp_path / "alice"
    admin_file.write_text("admin-token-from-a-file\n", encoding="utf-8")
    bot_file.write_text("alice-token-from-a-file\n", encoding="utf-8")
    srv = Serve(tmp_path / "ref.sqlite3", "--admin-token-file", str(admin_file),
                "--bot", f"alice=@{bot_file}")
    try:
        assert srv.admin_ok("admin-token-from-a-file")
        cmdline = Path(f"/proc/{srv.proc.pid}/cmdline").read_bytes().decode()
        assert "token-from-a-file" not in cmdline
        res = subprocess.run(
            [sys.executable, "-m", "chinchon.sdk", "--bot", "greedy", "--practice", "random",
             "--games", "1"],
            capture_output=True, text=True, timeout=120, cwd=ROOT,
            env=_env(CHINCHON_TARGET=f"127.0.0.1:{srv.port}",
                     CHINCHON_TOKEN="alice-token-from-a-file"))
        assert res.returncode == 0, res.stderr
    finally:
        srv.stop()
    env_srv = Serve(tmp_path / "ref2.sqlite3", env=_env(CHINCHON_ADMIN_TOKEN="admin-token-from-env"))
    try:
        assert env_srv.admin_ok("admin-token-from-env")
        assert not Path(f"{tmp_path / 'ref2.sqlite3'}.admin-token").exists()
    finally:
        env_srv.stop()


@pytest.mark.parametrize("args,where", [
    (["--bot", "alice=tiny-tok"], "--bot alice"),
    (["--admin-token", "tiny-tok"], "--admin-token"),
    (["--bots-file", "{bots}"], "bot 'bob'"),
    (["--bot", "alice"], "--bot expects NAME=TOKEN or NAME=@FILE"),
    (["--bot", "alice=@{missing}"], "--bot alice: cannot read"),
])
def test_serve_refuses_short_or_missing_tokens_naming_where_they_came_from(
    tmp_path: Path, args: list[str], where: str,
) -> None:
    bots = tmp_path / "bots.toml"
    bots.write_text('[bots]\nbob = "tiny-tok"\n', encoding="utf-8")
    args = [a.format(bots=bots, missing=tmp_path / "nope") for a in args]
    db = tmp_path / "ref.sqlite3"
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
         "--db", str(db), "--admin-token-file", str(tmp_path / "admin"), *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=_env())
    assert res.returncode == 2, res.stderr
    assert where in res.stderr, res.stderr
    assert "tiny-tok" not in res.stderr + res.stdout  # the refused token is not echoed
    if "tiny-tok" in " ".join(args):
        assert "16 characters" in res.stderr
    assert not db.exists()  # nothing was changed
    assert not (tmp_path / "admin").exists()


SHARED = "a-token-two-bots-share"
ADMIN_SECRET = "the-admin-token-of-these-tests"


def _admin_file(tmp_path: Path) -> Path:
    admin = tmp_path / "admin"
    admin.write_text(ADMIN_SECRET, encoding="utf-8")
    admin.chmod(0o600)
    return admin


def _refused_serve(db: Path, args: list[str], said: str) -> subprocess.CompletedProcess[str]:
    """``chinchon serve --db DB ARGS`` exits 2 saying ``said``."""
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
         "--db", str(db), *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=_env())
    assert res.returncode == 2, res.stderr
    assert said in res.stderr, res.stderr
    return res


@pytest.mark.parametrize("args,said", [
    (["--bot", f"alice={ADMIN_SECRET}", "--admin-token-file", "{admin}"],
     "--bot alice: its token is the admin token"),
    (["--bot", f"alice={SHARED}", "--bot", f"bob={SHARED}"],
     "--bot bob: its token is already the token of bot alice"),
    (["--bot", f"\u0430lice={SHARED}"], "a bot name is 1 to 64 ASCII letters"),
])
def test_serve_refuses_one_token_for_two_identities(
    tmp_path: Path, args: list[str], said: str,
) -> None:
    """A bot token equal to the admin token would give that bot admin rights; two bots
    with one token leave one of them locked out; a look-alike name is not a name. Each is
    refused (exit 2, naming the bots, never the token) before anything is written."""
    admin = _admin_file(tmp_path)
    if "--admin-token-file" not in args:
        args = [*args, "--admin-token-file", "{admin}"]
    db = tmp_path / "ref.sqlite3"
    res = _refused_serve(db, [a.format(admin=admin) for a in args], said)
    assert SHARED not in res.stderr + res.stdout and ADMIN_SECRET not in res.stderr + res.stdout
    assert not db.exists()


def test_serve_refuses_a_token_already_registered_to_another_bot(tmp_path: Path) -> None:
    """The database remembers alice's token: a later start registering bob with it (or
    choosing it as the admin token) is refused, and alice keeps it."""
    from chinchon_referee.auth import digest
    from chinchon_referee.storage import SqliteStore

    db = tmp_path / "ref.sqlite3"
    store = SqliteStore(str(db))
    store.upsert_bot("alice", digest(SHARED))
    store.close()
    admin = _admin_file(tmp_path)
    for args, said in (
        (["--admin-token-file", str(admin), "--bot", f"bob={SHARED}"],
         "--bot bob: its token is already the token of bot alice"),
        (["--admin-token", SHARED], "bot alice (registered in the database) has the admin token"),
    ):
        _refused_serve(db, args, said)
    store = SqliteStore(str(db))
    try:
        assert store.bots() == [("alice", digest(SHARED))]
    finally:
        store.close()
