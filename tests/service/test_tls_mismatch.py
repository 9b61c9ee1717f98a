"""A client that dials plaintext to a TLS referee, or TLS to a plaintext one, is told so
(what to fix), instead of gRPC's "Socket closed" or a failed handshake that read as "the
server is down": ``chinchon admin`` and the Python SDK say "the server speaks TLS: add
--root-cert (or --tls)" (or that it speaks plaintext), and stop at once. Real referees on
port 0, one with TLS (a CA made with openssl), the CLI and the SDK as processes."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from chinchon.sdk import BotClient, PracticeOptions
from chinchon.sdk.client import WrongTransport
from chinchon.wire.transport import SPEAKS_PLAINTEXT, SPEAKS_TLS, speaks_tls, tls_mismatch
from chinchon_referee.service.server import RunningServer, start_server

from tests.support.admin import make_certs
from tests.support.helpers import ADMIN, bot_token, sdk_bot, tokens_for
from tests.support.tournament import CLI


@pytest.fixture
async def referees(tmp_path: Path) -> AsyncIterator[tuple[RunningServer, RunningServer, Path]]:
    """(a TLS referee, a plaintext referee, the CA's PEM file)."""
    ca, cert, key = make_certs(tmp_path)
    tls = await start_server("127.0.0.1:0", tokens=tokens_for(["alice"]),
                             tls=(cert.read_bytes(), key.read_bytes()))
    plain = await start_server("127.0.0.1:0", tokens=tokens_for(["alice"]))
    try:
        yield tls, plain, ca
    finally:
        await tls.stop(0)
        await plain.stop(0)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_probe_tells_tls_from_plaintext(
    referees: tuple[RunningServer, RunningServer, Path],
) -> None:
    tls, plain, _ = referees
    assert await asyncio.to_thread(speaks_tls, f"localhost:{tls.port}") is True
    assert await asyncio.to_thread(speaks_tls, f"127.0.0.1:{plain.port}") is False
    assert await asyncio.to_thread(speaks_tls, f"127.0.0.1:{closed_port()}") is None
    assert await asyncio.to_thread(speaks_tls, "not an address") is None
    # What to tell: only a mismatch has a hint (a server that is down has none).
    assert await asyncio.to_thread(tls_mismatch, f"localhost:{tls.port}", False) == SPEAKS_TLS
    assert await asyncio.to_thread(tls_mismatch, f"localhost:{tls.port}", True) is None
    assert await asyncio.to_thread(tls_mismatch, plain.target, True) == SPEAKS_PLAINTEXT
    assert await asyncio.to_thread(tls_mismatch, plain.target, False) is None
    assert await asyncio.to_thread(tls_mismatch, f"127.0.0.1:{closed_port()}", False) is None


async def admin(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CHINCHON_ADMIN_TOKEN=ADMIN, COLUMNS="200")
    return await asyncio.to_thread(subprocess.run, [*CLI, "admin", *args], capture_output=True,
                                   text=True, timeout=120, env=env)


async def test_chinchon_admin_says_which_way_to_dial(
    referees: tuple[RunningServer, RunningServer, Path],
) -> None:
    tls, plain, ca = referees
    out = await admin("--target", f"localhost:{tls.port}", "list")
    assert out.returncode == 2, out
    assert f"localhost:{tls.port}: the server speaks TLS: add --root-cert (or --tls)" in out.stderr
    assert "Socket closed" in out.stderr  # gRPC's own words follow, in brackets
    out = await admin("--target", plain.target, "--root-cert", str(ca), "list")
    assert out.returncode == 2, out
    assert "the server speaks plaintext (no TLS): leave out --root-cert and --tls" in out.stderr
    out = await admin("--target", f"127.0.0.1:{closed_port()}", "list")  # down: as before
    assert out.returncode == 2 and "cannot reach the referee" in out.stderr, out
    assert "speaks" not in out.stderr


async def test_the_sdk_says_which_way_to_dial_and_stops(
    referees: tuple[RunningServer, RunningServer, Path],
) -> None:
    tls, plain, ca = referees
    practice = PracticeOptions(opponent="random", games=1)
    client = BotClient(_legal_first, f"localhost:{tls.port}", bot_token("alice"),
                       practice=practice, reconnect_for=60)
    with pytest.raises(WrongTransport, match=r"the server speaks TLS: add --root-cert \(or --tls\)"):
        await asyncio.wait_for(client.run(), 30)  # at once, not after 60 s of retries
    client = BotClient(_legal_first, plain.target, bot_token("alice"), practice=practice,
                       root_cert=ca.read_bytes(), reconnect_for=60)
    with pytest.raises(WrongTransport, match="the server speaks plaintext"):
        await asyncio.wait_for(client.run(), 30)
    # The command line: exit 1 with the hint.
    proc = await asyncio.create_subprocess_exec(
        *sdk_bot("greedy"), "--target", f"localhost:{tls.port}", "--practice", "random",
        env=dict(os.environ, CHINCHON_TOKEN=bot_token("alice")),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, err
    assert b"the server speaks TLS: add --root-cert (or --tls)" in err


async def test_the_sdk_dials_tls_with_the_system_roots(
    referees: tuple[RunningServer, RunningServer, Path],
) -> None:
    """``--tls``: TLS trusting the system's CAs (here the test CA, set as gRPC's default
    roots, as a public CA would be): a practice game is played."""
    tls, _, ca = referees
    proc = await asyncio.create_subprocess_exec(
        *sdk_bot("greedy"), "--target", f"localhost:{tls.port}", "--tls", "--practice", "random",
        env=dict(os.environ, CHINCHON_TOKEN=bot_token("alice"),
                 GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=str(ca)),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err
    assert b"1 games" in err


def _legal_first(obs: object, legal: list[object]) -> object:
    return legal[0]
