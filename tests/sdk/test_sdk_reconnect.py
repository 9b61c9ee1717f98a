"""The Python SDK's reconnect after a drop, end to end: a real referee on port 0, real
``python -m chinchon.sdk`` bot processes, and a TCP proxy of the test's own between them
that cuts every connection it carries in the middle of a game. The bots must come back
by themselves, resume their seats and finish the game normally."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from chinchon.engine import replay
from chinchon_referee.config import Policies, TimeControl
from chinchon_referee.host.processes import spawn as spawn_process

from tests.support.fixture_types import StartServer
from tests.support.helpers import BotProc, bot_token, play, sdk_bot, spec
from tests.support.waits import until


class Proxy:
    """Forwards every TCP connection accepted on 127.0.0.1:``port`` to ``upstream``;
    :meth:`cut` aborts every connection it carries, on both sides (an RST to the bot and
    to the referee, as when a network path dies)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.accepted = 0
        self.links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def cut(self) -> int:
        """Abort every live connection; how many there were."""
        links = list(self.links)
        for client, upstream in links:
            client.transport.abort()
            upstream.transport.abort()
        self.links.clear()
        return len(links)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.accepted += 1
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            except OSError:
                writer.transport.abort()
                return
            link = (writer, up_writer)
            self.links.add(link)
            pipes = [asyncio.ensure_future(self._pipe(reader, up_writer)),
                     asyncio.ensure_future(self._pipe(up_reader, writer))]
            try:
                # One side closing ends the link (gRPC never half-closes a connection).
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for p in pipes:
                    p.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
                self.links.discard(link)
                writer.transport.abort()
                up_writer.transport.abort()
        finally:
            self._tasks.discard(task)

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()


async def spawn_via(proxy: Proxy, name: str) -> BotProc:
    """An SDK bot process (``sdk_bot("greedy")``) for ``name`` that reaches the referee
    through ``proxy``."""
    proc = await spawn_process(
        [*sdk_bot("greedy"), "--target", proxy.target, "--token", bot_token(name)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    return BotProc(proc)


class Events(logging.Handler):
    """The referee's structured log events (``log.info(event, **fields)``)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.events: list[dict[str, Any]] = []
        self._changed: asyncio.Event | None = None

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append({"event": record.getMessage(), **(getattr(record, "fields", None) or {})})
        if self._changed is not None:
            self._changed.set()  # the referee logs on its event loop: the waiter's loop

    async def until(self, event: str, count: int, timeout: float = 60, **match: Any) -> None:
        """Wait until ``event`` (with ``match``) has been logged ``count`` times."""
        self._changed = changed = asyncio.Event()
        async with asyncio.timeout(timeout):
            while len(self.named(event, **match)) < count:
                changed.clear()
                await changed.wait()

    def named(self, event: str, **match: Any) -> list[dict[str, Any]]:
        return [e for e in self.events
                if e["event"] == event and all(e.get(k) == v for k, v in match.items())]


@contextlib.contextmanager
def referee_events() -> Iterator[Events]:
    logger = logging.getLogger("chinchon.referee")
    handler = Events()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def until_decisions(server: Any, n: int, game: asyncio.Future[Any], timeout: float = 60) -> None:
    """Wait until the referee has applied ``n`` answers of remote bots."""
    def reached() -> bool:
        if game.done() and server.referee.decisions < n:
            out = game.result()
            raise AssertionError(
                f"the game ended ({out.termination}: {out.record['result']['summary']}) after "
                f"{server.referee.decisions} decisions, before decision {n}")
        return server.referee.decisions >= n

    await until(reached, f"decision {n}", timeout,
                detail=lambda: f"only {server.referee.decisions} decisions")


def _stream_failures(bot: BotProc) -> int:
    return sum("stream failed" in line for line in bot.err)


@pytest.mark.parametrize("opponent", ["house", "sdk"])
async def test_sdk_bots_reconnect_after_every_connection_is_cut_mid_game(
    servers: StartServer, opponent: str,
) -> None:
    """Cut all the bots' TCP connections three times during a game (after 3, 9 and 16
    decisions; with two bot processes one of them is usually waiting for its turn when
    it loses its stream): every bot reconnects by itself, resumes its seat and the game
    ends normally, without a forfeit or a timeout. The bot processes are still running
    afterwards and play the next game without a cut."""

    names = ["A"] if opponent == "house" else ["A", "B"]
    server = await servers(names)
    host, port = server.target.rsplit(":", 1)
    assert host == "127.0.0.1"
    proxy = Proxy(int(port))
    await proxy.start()
    bots = [await spawn_via(proxy, n) for n in names]
    try:
        with referee_events() as events:
            assert await server.referee.lobby.wait_all(names, 120), "the bots did not connect"
            players = ["A", "house:greedy"] if opponent == "house" else ["A", "B"]
            # A roomy clock and grace: the clock keeps running while a bot is away,
            # and on a loaded machine coming back may take a while. Without a
            # reconnect, the seat forfeits after the 5 s grace.
            s = spec("cut", players, seed="cut-7", tc=TimeControl(5.0, 60.0),
                     policies=Policies(reconnect_grace=5.0, max_strikes=3))
            game = asyncio.ensure_future(play(server.referee, s))
            cuts = 0
            for after in (3, 6, 7):
                # Each cut comes once every bot is back in its seat from the last one
                # and the game has moved on by ``after`` more decisions (counted from
                # there: on a busy machine the game may run ahead of this loop).
                for name in names:
                    await events.until("seat_resumed", cuts, bot=name)
                await until_decisions(server, server.referee.decisions + after, game)
                n = proxy.cut()
                assert n == len(bots), f"{n} connections to cut after {after} more decisions"
                cuts += 1
            out = await game
            assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON"), \
                out.record["result"]["summary"]
            assert out.forfeited is None
            assert replay(out.record).state.is_over
            remote = [i for i, p in enumerate(players) if not p.startswith("house:")]
            for i in remote:
                st = out.stats[i]
                assert st.timeouts == 0 and st.strikes == 0 and st.illegal == 0, st
                assert st.decisions > 16 // len(remote), st
            # Every cut cost each bot its stream, and each came back for its seat.
            for name in names:
                resumed = events.named("seat_resumed", bot=name)
                assert len(resumed) == cuts, (name, resumed)
                assert len(events.named("seat_disconnected", game_id="cut", bot=name)) <= cuts
            assert not events.named("game_forfeited")
            assert proxy.accepted >= len(bots) * (1 + cuts)
            for b in bots:
                assert _stream_failures(b) >= cuts, b.err
                assert b.proc.returncode is None, (b.proc.returncode, b.err)

            # Still good for the next game, with no cut.
            s2 = spec("after", players, seed="after", tc=TimeControl(5.0, 60.0))
            out2 = await play(server.referee, s2)
            assert out2.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
            assert all(st.timeouts == 0 and st.strikes == 0 for st in out2.stats)
        for b in bots:
            assert b.proc.returncode is None, (b.proc.returncode, b.err)
            assert not any("Traceback" in line or "error:" in line for line in b.err), b.err
    finally:
        await proxy.close()
