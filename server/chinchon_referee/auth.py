"""Identity: bot tokens and the admin token, checked by a server interceptor.

Tokens travel in call metadata as ``authorization: Bearer <token>``. Only SHA-256
digests of tokens are kept. A call with a missing or unknown token gets
UNAUTHENTICATED and nothing else; admin calls need the admin token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import grpc

REFEREE_PREFIX = "/chinchon.v1.RefereeService/"
#: The organizer's services (``str.startswith`` takes the tuple): admin token required.
ADMIN_PREFIX = ("/chinchon.v1.TournamentService/", "/chinchon.v1.LadderService/")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh secret. It never starts with '-', which command lines would take for an
    option when the token is passed as ``--token VALUE``; it meets the token rule
    (texts.py): 36 characters of ``A-Za-z0-9_-``."""
    return "tok_" + secrets.token_urlsafe(24)


def token_from_metadata(metadata: Iterable[Any] | None) -> str | None:
    return read_authorization(metadata)[0]


#: What is wrong with a call's ``authorization`` metadata (see :func:`read_authorization`).
MISSING, MALFORMED = "missing", "malformed"


def read_authorization(metadata: Iterable[Any] | None) -> tuple[str | None, str | None]:
    """``(token, None)`` from a call's ``authorization: Bearer <token>`` metadata, or
    ``(None, MISSING)`` when the call has none, ``(None, MALFORMED)`` when it is not
    ``Bearer <token>``."""
    for item in metadata or ():
        key, value = item[0], item[1]
        if key == "authorization":
            text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
            scheme, _, tok = text.partition(" ")
            if scheme.lower() == "bearer" and tok.strip():
                return tok.strip(), None
            return None, MALFORMED
    return None, MISSING


#: The refusals of a call without the right token, by what was wrong: distinct texts, so
#: that whoever typed the command can tell a forgotten option from a wrong file. None
#: names the token.
BEARER = "send the metadata 'authorization: Bearer <token>'"
ADMIN_REFUSALS = {
    MISSING: "missing admin token: admin calls need the admin token; " + BEARER
             + " (chinchon admin: --admin-token-file FILE or $CHINCHON_ADMIN_TOKEN)",
    MALFORMED: "malformed authorization metadata: expected 'Bearer <token>'",
    "bot": "wrong admin token: this is a bot's token; admin calls need the admin token "
           "(the server's DB.admin-token file, or its --admin-token-file)",
    "wrong": "wrong admin token: it is not this server's admin token (the server's "
             "DB.admin-token file, or its --admin-token-file)",
}
BOT_REFUSALS = {
    MISSING: "missing token: " + BEARER,
    MALFORMED: "malformed authorization metadata: expected 'Bearer <token>'",
    "wrong": "unknown token: no bot registered here has it (ask the organizer)",
}


class TokenBook:
    """Bot tokens (digest -> bot name) and the admin token digest."""

    def __init__(self, admin_token: str | None = None) -> None:
        self._bots: dict[str, str] = {}
        self._admin = digest(admin_token) if admin_token else None
        #: Counts the changes: a reader of the store can tell that the book changed
        #: while it read.
        self.generation = 0
        #: Sharing a database: reads the registered bots again, for a token another
        #: process may have registered since this one last read them
        #: (``Cluster.reread_tokens``); None when this process alone registers bots.
        self.reread: Callable[[], Awaitable[None]] | None = None

    @classmethod
    def of_digests(cls, admin_digest: str | None, bots: Iterable[tuple[str, str]]) -> TokenBook:
        """A book from digests alone (the admin token's, and each bot's as the store keeps
        them): what a process that never sees the tokens checks new ones against."""
        book = cls()
        book._admin = admin_digest or None
        for bot, token_digest in bots:
            book.add_digest(bot, token_digest)
        return book

    def add(self, bot: str, token: str) -> None:
        self.add_digest(bot, digest(token))

    def add_digest(self, bot: str, token_digest: str) -> None:
        self._bots[token_digest] = bot
        self.generation += 1

    def remove(self, bot: str) -> None:
        """Forget every token of ``bot``: they fail from the next call on. (``list`` copies
        the items at once: ``create`` may add tokens from a worker thread meanwhile.)"""
        for d, b in list(self._bots.items()):
            if b == bot:
                self._bots.pop(d, None)
        self.generation += 1

    def digests(self) -> dict[str, set[str]]:
        """Each bot's token digests."""
        out: dict[str, set[str]] = {}
        for d, b in list(self._bots.items()):
            out.setdefault(b, set()).add(d)
        return out

    def holder(self, token_digest: str) -> str | None:
        """The bot whose token has this digest, or None."""
        return self._bots.get(token_digest)

    def bot_for(self, token: str | None) -> str | None:
        if not token:
            return None
        return self._bots.get(digest(token))

    async def bot_for_now(self, token: str | None) -> str | None:
        """:meth:`bot_for`; a token unknown here is looked for again after the registered
        bots are read again (:attr:`reread`), before it is refused."""
        bot = self.bot_for(token)
        if bot is None and token and self.reread is not None:
            await self.reread()
            bot = self.bot_for(token)
        return bot

    def bot_for_metadata(self, metadata: Iterable[Any] | None) -> str | None:
        return self.bot_for(token_from_metadata(metadata))

    def is_admin(self, token: str | None) -> bool:
        return bool(token and self._admin and hmac.compare_digest(digest(token), self._admin))

    @property
    def bots(self) -> list[str]:
        return sorted(set(self._bots.values()))


#: How long a refused stream is given to send its first message (see ``_deny``).
FIRST_MESSAGE_WAIT = 1.0


def _deny(handler: grpc.RpcMethodHandler[Any, Any], message: str) -> grpc.RpcMethodHandler[Any, Any]:
    async def abort(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def abort_stream(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        # The client's first message is read (a second at most) before the refusal: a
        # client that writes at once (a bot's hello) then reads UNAUTHENTICATED, instead
        # of gRPC's "Internal error from Core" when its write raced the call's end.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(anext(aiter(requests)), FIRST_MESSAGE_WAIT)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort_stream)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(abort_stream)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(abort)
    return grpc.unary_unary_rpc_method_handler(abort)


class AuthInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, tokens: TokenBook) -> None:
        self.tokens = tokens

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = details.method
        handler = await continuation(details)
        token, problem = read_authorization(details.invocation_metadata)
        if handler is None:
            # An unknown method: still no information for callers without a token.
            allowed = (
                self.tokens.is_admin(token) if method.startswith(ADMIN_PREFIX)
                else self.tokens.bot_for(token) is not None if method.startswith(REFEREE_PREFIX)
                else True
            )
            if not allowed:
                return _deny(grpc.unary_unary_rpc_method_handler(lambda r, c: None),
                             "unknown or missing token")
            return handler
        if method.startswith(REFEREE_PREFIX):
            if problem is not None:
                return _deny(handler, BOT_REFUSALS[problem])
            if await self.tokens.bot_for_now(token) is None:
                return _deny(handler, BOT_REFUSALS["wrong"])
        elif method.startswith(ADMIN_PREFIX) and not self.tokens.is_admin(token):
            why = problem or ("bot" if self.tokens.bot_for(token) is not None else "wrong")
            return _deny(handler, ADMIN_REFUSALS[why])
        return handler
