"""The gRPC face of the referee: ``RefereeService.Play`` opens a stream, says welcome,
then hands it to the lobby (queue mode) or to a practice session."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import duration

from .. import __version__
from ..auth import TokenBook
from ..logs import get_logger
from .connection import Connection
from .errors import Disconnected
from .practice_sessions import refuse
from .referee import Referee

log = get_logger("referee.servicer")
#: How long a refused stream is given to send its first message (as auth.py gives one
#: refused for its token).
FIRST_MESSAGE_WAIT = 1.0


async def _refuse(context: grpc.aio.ServicerContext[bytes, bytes], code: grpc.StatusCode,
                  why: str) -> None:
    """Refuse a stream after reading its first message (a second at most), as refused
    tokens are (auth.py): a client that writes its hello at once then reads ``code``,
    not gRPC's "Internal error from Core" when its write raced the end of the call."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(context.read(), FIRST_MESSAGE_WAIT)
    await context.abort(code, why)


def _log_session_error(session: asyncio.Future[None]) -> None:
    if not session.cancelled() and session.exception() is not None:
        log.error("practice_session_failed", error=repr(session.exception()))


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    def __init__(self, referee: Referee, tokens: TokenBook) -> None:
        self.referee = referee
        self.tokens = tokens

    async def _new_session(
        self, conn: Connection, req: pb.PracticeRequest
    ) -> asyncio.Future[None] | None:
        """Start a practice session for ``conn``; or, when its bot or the referee runs
        as many as the limits allow, refuse it (an in-band error, then the stream ends
        with RESOURCE_EXHAUSTED) and return None."""
        sessions = self.referee.practice_sessions
        refused = sessions.refusal(conn.bot)
        if refused is not None:
            n = sessions.worth_logging(conn.bot)
            if n is not None:
                log.warning("practice_refused", bot=conn.bot, conn=conn.id, why=refused,
                            refusals=n)
            try:
                await refuse(conn, refused)
            except Disconnected:
                pass
            conn.abort = (grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            return None
        bot = conn.bot
        sessions.take(bot)
        session = asyncio.ensure_future(self.referee.practice(conn, req))
        session.add_done_callback(lambda _: sessions.give_back(bot))
        session.add_done_callback(_log_session_error)
        return session

    def _welcome(self, bot: str) -> pb.PlayResponse:
        limits = self.referee.config.limits
        policies = self.referee.config.policies
        return pb.PlayResponse(welcome=pb.Welcome(
            bot_name=bot, server_version=__version__, protocol="chinchon.v1",
            limits=pb.Limits(
                max_message_bytes=limits.max_message_bytes,
                max_unsolicited_messages=limits.max_unsolicited,
                max_illegal_retries=policies.max_illegal_retries,
                max_strikes=policies.max_strikes,
                reconnect_grace=duration(policies.reconnect_grace),
            ),
        ))

    async def _practice(self, conn: Connection, hello: pb.PracticeRequest) -> None:
        """A practice stream: its session, or the one it takes over.

        The session runs on its own: if this stream is lost, its game holds the seat, and
        the bot's next practice stream takes it over (and stays until the session ends)
        instead of starting a new session. This stream waits until the session ends, or
        until it is ended itself (its token rotated or revoked, a flood): then at once,
        saying why. The session goes on (a stream of the bot may take its seat over)
        unless it is over."""
        session = self.referee.lobby.resume_practice(conn)
        if session is None:
            session = await self._new_session(conn, hello)
        if session is None:
            return
        ended = asyncio.ensure_future(conn.closed.wait())
        either: set[asyncio.Future[Any]] = {session, ended}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()

    async def Play(self, request_iterator: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        bot = self.tokens.bot_for_metadata(context.invocation_metadata())
        if bot is None:  # the interceptor already refused it; belt and braces
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown or missing token")
            return
        if self.referee.closing is not None:
            await _refuse(context, grpc.StatusCode.UNAVAILABLE, self.referee.closing)
            return
        refused = self.referee.streams.refusal(bot)
        if refused is not None:
            n = self.referee.streams.worth_logging(bot)
            if n is not None:
                log.warning("stream_refused", bot=bot, why=refused, refusals=n)
            await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            return
        limits = self.referee.config.limits
        conn = Connection(bot, context, limits, self.referee.incident)
        reader = asyncio.ensure_future(conn.read_loop())
        self.referee.connections.add(conn)
        self.referee.streams.take(bot)
        log.info("stream_opened", bot=bot, conn=conn.id)
        try:
            try:
                hello = await asyncio.wait_for(asyncio.shield(conn.hello), limits.hello_timeout)
            except TimeoutError:
                await context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"no hello within {limits.hello_timeout:g} s: send Hello first",
                )
                return
            except Disconnected:
                if conn.abort:
                    await context.abort(*conn.abort)
                return
            await conn.send(self._welcome(bot))
            if hello.WhichOneof("mode") == "practice":
                await self._practice(conn, hello.practice)
            else:
                conn.queue = True
                await self.referee.lobby.add(conn)
                await conn.closed.wait()
            if conn.abort:
                await context.abort(*conn.abort)
        except Disconnected:
            if conn.abort:
                await context.abort(*conn.abort)
        finally:
            self.referee.connections.discard(conn)
            self.referee.streams.give_back(bot)
            self.referee.lobby.remove(conn)
            reader.cancel()
            log.info("stream_closed", bot=bot, conn=conn.id)
