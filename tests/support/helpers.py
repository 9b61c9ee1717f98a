"""Shared helpers for the referee tests: a real server on port 0, real bot processes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from chinchon.engine import RuleSet
from chinchon_referee.auth import TokenBook
from chinchon_referee.config import Policies, RefereeConfig, TimeControl
from chinchon_referee.launch.bots import BotProcess, launch
from chinchon_referee.referee import GameOutcome, GameSpec, Referee
from chinchon_referee.service.server import RunningServer, start_server

from tests.support.inproc import InProcessBot

ROOT = Path(__file__).resolve().parents[2]
RAW_BOT = str(ROOT / "tests" / "bots" / "raw_bot.py")
NODE_BOT = ROOT / "sample_bots" / "node" / "bot.js"
ADMIN = "admin-token-for-tests"


def bot_token(name: str) -> str:
    """The test token of bot ``name`` (long enough for the organizer's minimum)."""
    return f"tok-{name}-test-token"


def tokens_for(names: Sequence[str]) -> TokenBook:
    book = TokenBook(ADMIN)
    for n in names:
        book.add(n, bot_token(n))
    return book


async def start(names: Sequence[str], config: RefereeConfig | None = None,
                port: int = 0) -> RunningServer:
    """A referee server knowing ``names``, on ``port`` (0: a free one)."""
    return await start_server(f"127.0.0.1:{port}", config or RefereeConfig(), tokens_for(names))


#: A bot process whose stdout/stderr are drained continuously into ``out``/``err``.
BotProc = BotProcess
#: A bot a test started: a process, or a task on the test's loop (tests/support/inproc.py).
Bot = BotProcess | InProcessBot


async def spawn(cmd: Sequence[str], server: RunningServer, name: str) -> BotProc:
    """Start a bot process for ``name``: the referee's launcher, its token in the
    environment only."""
    return await launch(cmd, server.target, bot_token(name))


def raw_bot(mode: str, *extra: str) -> list[str]:
    return [sys.executable, RAW_BOT, "--mode", mode, *extra]


def sdk_bot(bot: str = "greedy") -> list[str]:
    return [sys.executable, "-m", "chinchon.sdk", "--bot", bot]


def node_bot(*extra: str) -> list[str]:
    if not (NODE_BOT.parent / "node_modules").is_dir():
        raise AssertionError(
            "the Node bot's dependencies are missing: run `npm ci --prefix sample_bots/node`"
        )
    return ["node", str(NODE_BOT), *extra]


def spec(
    game_id: str,
    players: list[str],
    seed: str = "seed",
    rules: RuleSet | None = None,
    tc: TimeControl | None = None,
    policies: Policies | None = None,
) -> GameSpec:
    return GameSpec(
        game_id=game_id, rules=rules or RuleSet(players=len(players)), players=players,
        seed=seed, deal_id=game_id, time_control=tc or TimeControl(2.0, 10.0),
        policies=policies or Policies(reconnect_grace=10.0),
    )


async def play(referee: Referee, s: GameSpec, timeout: float = 120) -> GameOutcome:
    return await asyncio.wait_for(referee.play(s), timeout)


async def printed(procs: Sequence[Bot], text: str, timeout: float = 60) -> None:
    """Wait until every process has printed a line containing ``text`` (a bot prints a
    message only once it has read it: kill it earlier and the test misses the last
    messages). ``timeout`` only guards against a hang: a process just started may take
    seconds to print anything on a busy machine."""
    try:
        await asyncio.wait_for(asyncio.gather(*(p.printed(text) for p in procs)), timeout)
    except (TimeoutError, EOFError):
        missing = [i for i, p in enumerate(procs) if not any(text in ln for ln in p.out)]
        raise AssertionError(f"processes {missing} did not print {text!r} in {timeout:g} s") from None


async def stop(*procs: Bot) -> None:
    for p in procs:
        await p.kill()
