"""The referee on a Unix domain socket besides TCP (``start_server(unix=...)``,
``chinchon serve --unix PATH``): what a sandboxed bot, which has no network, dials. The
Python SDK, the Node and the C++ sample bots take a ``unix:PATH`` target; each plays
practice games over one, for real."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from chinchon_referee.service.server import RunningServer, listen_unix, start_server

from tests.support.fixture_types import SpawnChild
from tests.support.helpers import NODE_BOT, bot_token, tokens_for


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path (a socket's path is at most 107 bytes; pytest's
    temporary folders can be longer)."""
    with tempfile.TemporaryDirectory(prefix="chs-") as d:
        yield Path(d)


@pytest.fixture
async def unix_server(short_dir: Path) -> AsyncIterator[RunningServer]:
    server = await start_server("127.0.0.1:0", None, tokens_for(["py", "node", "cpp"]),
                                unix=short_dir / "referee.sock")
    yield server
    await server.stop(0)


def _env(name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHINCHON_")}
    return dict(env, CHINCHON_TOKEN=bot_token(name))


async def _practice(children: SpawnChild, cmd: list[str], name: str) -> str:
    bot = await children(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(name))
    rc = await bot.wait(180)
    err = "".join(bot.err)
    assert rc == 0, err[-3000:]
    return err


async def test_the_python_sdk_practices_over_a_unix_socket(
    unix_server: RunningServer, children: SpawnChild,
) -> None:
    assert unix_server.unix_target.startswith("unix:/")
    err = await _practice(children, [sys.executable, "-m", "chinchon.sdk", "--target",
                                     unix_server.unix_target, "--practice", "greedy",
                                     "--games", "2"], "py")
    assert "error" not in err.lower(), err


async def test_the_node_bot_practices_over_a_unix_socket(
    unix_server: RunningServer, children: SpawnChild,
) -> None:
    assert (NODE_BOT.parent / "node_modules").is_dir()
    err = await _practice(children, ["node", str(NODE_BOT), "--target", unix_server.unix_target,
                                     "--practice", "greedy", "--games", "2"], "node")
    assert "connected as node" in err and "practice done: 2 game(s)" in err, err


async def test_the_cpp_bot_practices_over_a_unix_socket(
    cpp_bot: Path, unix_server: RunningServer, children: SpawnChild,
) -> None:
    err = await _practice(children, [str(cpp_bot), "--target", unix_server.unix_target,
                                     "--practice", "greedy", "--games", "2"], "cpp")
    assert "welcome cpp" in err and err.count(" ended: ") == 2, err


async def test_a_stale_socket_is_replaced_and_anything_else_refused(short_dir: Path) -> None:
    stale = short_dir / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))  # left behind by a run that was killed
    server = await start_server("127.0.0.1:0", None, tokens_for([]), unix=stale)
    await server.stop(0)
    plain = short_dir / "file"
    plain.write_text("mine")
    with pytest.raises(OSError, match="not a socket"):
        await start_server("127.0.0.1:0", None, tokens_for([]), unix=plain)
    assert plain.read_text() == "mine"
    with pytest.raises(OSError, match="too long"):
        listen_unix(None, short_dir / ("x" * 120))  # type: ignore[arg-type]
