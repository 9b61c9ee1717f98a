"""A real referee server on port 0 with the admin service over a real SQLite store, and
the calls the admin tests make with it (no tests here)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import grpc
from chinchon.engine import Outcome, play_game
from chinchon.strategies import BUILTIN_BOTS
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.director.director import Director
from chinchon_referee.referee.seats import SeatStats
from chinchon_referee.service.server import RunningServer, start_server
from chinchon_referee.service.tournaments import add_admin_service
from chinchon_referee.storage import GameRow, SqliteStore

from tests.support.helpers import ADMIN, sdk_bot
from tests.support.referee import play_call
from tests.support.tournament import CLI

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)


@dataclass
class AdminEnv:
    server: RunningServer
    store: SqliteStore
    director: Director
    stub: tpb_grpc.TournamentServiceStub


@asynccontextmanager
async def admin_env(db: Path) -> AsyncIterator[AdminEnv]:
    """A server as ``chinchon serve`` makes it: the bots registered in ``db`` can log in."""
    store = SqliteStore(str(db))
    tokens = TokenBook(ADMIN)
    for name, dig in store.bots():
        tokens.add_digest(name, dig)
    server = await start_server(
        "127.0.0.1:0", None, tokens,
        add_services=lambda srv, ref, book: add_admin_service(srv, ref, book, store))
    try:
        async with grpc.aio.insecure_channel(server.target) as ch:
            yield AdminEnv(server, store, server.extras["director"],
                           tpb_grpc.TournamentServiceStub(ch))
    finally:
        await server.stop(0)
        await server.extras["director"].settle(5.0)
        store.close()


async def hello(target: str, token: str) -> grpc.aio.StreamStreamCall:  # type: ignore[type-arg]
    """A Play stream that said hello and was welcomed (AioRpcError if it was refused)."""
    call = await play_call(target, token)
    await call.write(pb.PlayRequest(hello=pb.Hello(client="admin-test")))
    msg = await call.read()
    assert msg.HasField("welcome"), msg
    return call


def finish_with_engine_games(env: AdminEnv, tid: str, count: int) -> list[GameRow]:
    """Play the first ``count`` scheduled games of ``tid`` with engine bots under the
    tournament's rules (real records) and store them as finished, as the director would."""
    store = env.store
    rules = env.director.spec_of(tid).rules
    rows = store.games(tid)[:count]
    kinds = ["random", "greedy"]
    for i, row in enumerate(rows):
        bots = [BUILTIN_BOTS[kinds[(i + s) % 2]](s) for s in range(len(row.players))]
        _, rec = play_game(rules, bots, f"seed-{tid}", row.deal_id,
                           row.players, game_id=row.id)
        row.record = json.loads(json.dumps(rec))
        row.result = Outcome.from_json(row.record["result"])
        row.stats = [asdict(SeatStats()) for _ in row.players]
        store.finish_game(row)
    return rows


def make_certs(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate it signed for localhost and 127.0.0.1 (the
    commands of docs/walkthrough.md): (ca.pem, server.pem, server.key)."""
    def run(*cmd: str) -> None:
        subprocess.run(cmd, cwd=folder, check=True, capture_output=True, timeout=60)

    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
        "-subj", "/CN=Chinchon test CA")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (folder / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "30", "-extfile", "san.ext")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


class AdminCli:
    """`chinchon admin` against one server, the admin token in a file."""

    def __init__(self, tmp: Path, port: int, root_cert: Path | None = None) -> None:
        self.token_file = tmp / "admin.token"
        self.token_file.write_text(ADMIN + "\n")
        self.base = [*CLI, "admin", "--target", f"localhost:{port}",
                     "--admin-token-file", str(self.token_file)]
        if root_cert is not None:
            self.base += ["--root-cert", str(root_cert)]
        self.env = {k: v for k, v in os.environ.items() if k != "CHINCHON_ADMIN_TOKEN"}
        self.env.update(COLUMNS="200", PYTHONUNBUFFERED="1")

    def __call__(self, *args: str, code: int = 0) -> str:
        proc = subprocess.run([*self.base, *args], capture_output=True, text=True,
                              timeout=120, env=self.env)
        assert proc.returncode == code, (args, proc.returncode, proc.stdout, proc.stderr)
        return proc.stdout + proc.stderr

    def popen(self, out: Path, *args: str) -> subprocess.Popen[bytes]:
        with open(out, "wb") as f:
            return subprocess.Popen([*self.base, *args], stdout=f, stderr=subprocess.STDOUT,
                                    env=self.env)


def bots_over(port: int, tokens: dict[str, str], tmp: Path, root_cert: Path | None = None,
              n: int = 0) -> list[subprocess.Popen[bytes]]:
    """One SDK bot process per bot (greedy), its token in CHINCHON_TOKEN."""
    procs = []
    for name, token in tokens.items():
        extra = ["--root-cert", str(root_cert)] if root_cert else []
        with open(tmp / f"{name}.{n}.log", "wb") as err:
            procs.append(subprocess.Popen(
                [*sdk_bot("greedy"), "--target", f"localhost:{port}", *extra],
                stdout=subprocess.DEVNULL, stderr=err,
                env=dict(os.environ, CHINCHON_TOKEN=token, PYTHONUNBUFFERED="1")))
    return procs
