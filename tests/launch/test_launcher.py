"""The one bot-process launcher (chinchon_referee.launch.bots): the token only in the
environment, output drained whatever its size, SIGTERM then SIGKILL."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.launch.bots import LINE_LIMIT, BotProcess, Keep, launch
from chinchon_referee.service.server import RunningServer

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import stop

TOKEN = "launcher-test-token-0123456789"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


SHOW = python(
    "import os, sys; "
    "print(open('/proc/self/cmdline', 'rb').read().replace(b'\\0', b' ').decode()); "
    "print('TOKEN=' + os.environ['CHINCHON_TOKEN']); print('TARGET=' + os.environ['CHINCHON_TARGET'])"
)


#: The ``launched`` fixture: ``await launched(cmd, target, token, **options)`` is
#: ``launch``'s process.
Launch = Callable[..., Awaitable[BotProcess]]


@pytest.fixture
async def launched() -> AsyncIterator[Launch]:
    """A factory of ``launch``ed processes; any one still running after the test is
    killed."""
    procs: list[BotProcess] = []

    async def _launch(cmd: Sequence[str], target: str, token: str, **options: Any) -> BotProcess:
        proc = await launch(cmd, target, token, **options)
        procs.append(proc)
        return proc

    yield _launch
    await stop(*procs)


async def test_the_token_is_in_the_environment_only_and_the_target_on_the_command_line(
    launched: Launch,
) -> None:
    bot = await launched(SHOW, "127.0.0.1:9", TOKEN)
    assert await bot.wait(60) == 0
    cmdline, token, target = list(bot.out)
    assert TOKEN not in cmdline and "--token" not in cmdline, cmdline
    assert cmdline.rstrip().endswith("--target 127.0.0.1:9"), cmdline
    assert token.strip() == f"TOKEN={TOKEN}" and target.strip() == "TARGET=127.0.0.1:9"


@pytest.mark.parametrize("server", [["spy"]], indirect=True)
async def test_the_tests_spawn_puts_no_token_on_the_command_line(
    server: RunningServer, bots: SpawnBot,
) -> None:
    """tests.support.helpers.spawn (which put ``--token`` on the command line) is the launcher."""

    bot = await bots(SHOW, server, "spy")
    assert await bot.wait(60) == 0
    out = "".join(bot.out)
    cmdline = out.splitlines()[0]
    assert "--token" not in cmdline and "tok-spy" not in cmdline, cmdline
    assert "TOKEN=tok-spy-test-token" in out


async def test_huge_lines_and_floods_on_both_streams_never_block_the_bot(launched: Launch) -> None:
    """A line longer than the line limit comes in pieces of the limit (asyncio's
    readline gave up past 64 KiB by default); 20 MiB on stderr meanwhile does not block
    the bot (a pipe holds 64 KiB)."""
    code = (
        "import sys; sys.stderr.write('e' * (20 << 20)); sys.stderr.flush(); "
        f"sys.stdout.write('x' * ({LINE_LIMIT} + 5) + '\\nend\\n')"
    )

    bot = await launched(python(code), "127.0.0.1:9", TOKEN)
    assert await bot.wait(120) == 0
    out, err = list(bot.out), list(bot.err)
    assert [len(x) for x in out] == [LINE_LIMIT, 6, 4] and out[-1] == "end\n"
    assert sum(len(x) for x in err) == 20 << 20


async def test_a_log_file_gets_stderr_and_a_tail_keeps_the_last_lines(
    tmp_path: Path, launched: Launch,
) -> None:
    code = "import sys\nfor i in range(100): print(i, file=sys.stderr)\nprint('out')"

    logged = await launched(python(code), "t:1", TOKEN, stdout=Keep.DISCARD,
                            stderr=tmp_path / "bot.log")
    assert await logged.wait(60) == 0 and not logged.out and not logged.err
    tailed = await launched(python(code), "t:1", TOKEN, tail=3)
    assert await tailed.wait(60) == 0
    assert list(tailed.err) == ["97\n", "98\n", "99\n"]
    assert (tmp_path / "bot.log").read_text().split() == [str(i) for i in range(100)]


#: Bots that would run for good: ``stop`` ends them, the behaviour under test.
FOREVER = 600


async def test_stop_asks_with_sigterm_then_kills_a_bot_that_ignores_it(launched: Launch) -> None:
    polite = python(f"import time; print('ready', flush=True); time.sleep({FOREVER})")
    stubborn = python("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                      f"print('ready', flush=True); time.sleep({FOREVER})")

    a = await launched(polite, "t:1", TOKEN)
    b = await launched(stubborn, "t:1", TOKEN)
    await asyncio.wait_for(asyncio.gather(a.printed("ready"), b.printed("ready")), 60)
    assert (await a.stop(30.0), await b.stop(0.5)) == (-signal.SIGTERM, -signal.SIGKILL)


def test_practice_names_a_bot_command_that_cannot_start(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A command that does not exist is a usage error (exit 2) naming it, not a traceback
    (and the private referee it started is stopped)."""
    from chinchon_referee import cli

    missing = str(tmp_path / "no-such-bot")
    assert cli.main(["practice", "--games", "1", "--out", str(tmp_path / "out"), "--", missing]) == 2
    out = capsys.readouterr().out
    assert "cannot start the bot's command" in out and "no-such-bot" in out
