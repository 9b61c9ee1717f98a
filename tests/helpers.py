"""Shared helpers for the referee tests: a real server on port 0, real bot processes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from chinchon.engine import RuleSet
from chinchon_referee.auth import TokenBook
from chinchon_referee.config import Policies, RefereeConfig, TimeControl
from chinchon_referee.referee import GameOutcome, GameSpec, Referee
from chinchon_referee.server import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[1]
RAW_BOT = str(ROOT / "tests" / "bots" / "raw_bot.py")
NODE_BOT = ROOT / "sample_bots" / "node" / "bot.js"
ADMIN = "admin-token-for-tests"
#: Longest line read from a bot process: raw bots print whole messages, and a practice
#: game's game_ended carries its record (a long game of the 48-card deck passes 64 KiB).
LINE_LIMIT = 16 * 1024 * 1024


def bot_token(name: str) -> str:
    """The test token of bot ``name`` (long enough for the organizer's minimum)."""
    return f"tok-{name}-test-token"


def tokens_for(names: Sequence[str]) -> TokenBook:
    book = TokenBook(ADMIN)
    for n in names:
        book.add(n, bot_token(n))
    return book


async def start(names: Sequence[str], config: RefereeConfig | None = None) -> RunningServer:
    return await start_server("127.0.0.1:0", config or RefereeConfig(), tokens_for(names))


class BotProc:
    """A bot process whose stdout/stderr are drained continuously (never blocks it)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.out: list[str] = []
        self.err: list[str] = []
        self._tasks = [
            asyncio.ensure_future(self._drain(proc.stdout, self.out)),
            asyncio.ensure_future(self._drain(proc.stderr, self.err)),
        ]

    @staticmethod
    async def _drain(stream: asyncio.StreamReader | None, into: list[str]) -> None:
        if stream is None:
            return
        while line := await stream.readline():
            into.append(line.decode(errors="replace"))

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        await asyncio.gather(*self._tasks)

    async def wait(self, timeout: float = 30) -> int:
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.gather(*self._tasks)
        return rc


async def spawn(cmd: Sequence[str], server: RunningServer, name: str) -> BotProc:
    """Start a bot process for ``name`` with its token."""
    proc = await asyncio.create_subprocess_exec(
        *cmd, "--target", server.target, "--token", bot_token(name),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        limit=LINE_LIMIT,
    )
    return BotProc(proc)


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


async def printed(procs: Sequence[BotProc], text: str, timeout: float = 15) -> None:
    """Wait until every process has printed a line containing ``text`` (a bot prints a
    message only once it has read it: kill it earlier and the test misses the last
    messages)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not all(any(text in line for line in p.out) for p in procs):
        if asyncio.get_running_loop().time() > deadline:
            missing = [i for i, p in enumerate(procs) if not any(text in ln for ln in p.out)]
            raise AssertionError(f"processes {missing} did not print {text!r} in {timeout:g} s")
        await asyncio.sleep(0.02)


async def stop(*procs: BotProc) -> None:
    for p in procs:
        await p.kill()
