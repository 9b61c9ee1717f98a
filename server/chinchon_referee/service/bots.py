"""The organizer's management of bot tokens (list, add, rotate, revoke) and of who is
connected now. Tokens are shown once, in the response that makes them; the store and
the token book keep only digests. Rotating or revoking a token takes effect at once:
the next call with the old token is refused, and the bot's open streams are ended
(UNAUTHENTICATED), so a leaked token stops working mid-game too. On a database shared by
several referee processes the others are told at once (and read the registered bots at
every heartbeat in any case), and the streams counted are every process's."""

from __future__ import annotations

from typing import Any

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from google.protobuf.timestamp_pb2 import Timestamp

from ..auth import digest, new_token
from ..cluster.messages import Kind
from ..director.director import Director
from ..host.pools import for_organizer
from ..logs import get_logger
from ..referee.streams import BotStreams, end_streams, stream_counts
from ..texts import TextError, check_bot_name, check_token, clip

log = get_logger("admin")

Context = grpc.aio.ServicerContext


class BotsAdmin:
    """ListBots, AddBot, RotateBotToken, RevokeBot, ListConnectedBots (a mixin of the
    servicer)."""

    director: Director

    def _streams(self) -> dict[str, tuple[BotStreams, int]]:
        """Each bot's open streams and the processes they are on: this one, and on a
        shared database the others (as of their last heartbeat)."""
        counts = {b: (c, 1) for b, c in stream_counts(self.director.referee).items()}
        if self.director.cluster is not None:
            for b, (c, n) in self.director.cluster.streams_elsewhere().items():
                mine, m = counts.get(b, (BotStreams(), 0))
                counts[b] = (mine + c, m + n)
        return counts

    def _told(self) -> None:
        """The registered bots changed: the other processes read them again."""
        if self.director.cluster is not None:
            self.director.cluster.publish(Kind.BOTS)

    async def _registered(self, name: str) -> float | None:
        """When ``name`` was registered (read in a worker thread)."""
        return (await for_organizer(self.director.store.bot_created)).get(name)

    def _bot(self, name: str, when: float | None,
             streams: dict[str, tuple[BotStreams, int]] | None = None) -> tpb.BotInfo:
        ts = Timestamp()
        ts.FromNanoseconds(int((when or 0) * 1e9))
        counted = (self._streams() if streams is None else streams).get(name)
        return tpb.BotInfo(name=name, created=ts, streams=counted[0].streams if counted else 0)

    def _end_streams(self, name: str, why: str) -> int:
        """End the bot's streams here (the other processes end theirs when told)."""
        self._told()
        return end_streams(self.director.referee, name, why)

    async def _new_token(self, name: str, token: str, context: Context[Any, Any]) -> str:
        """``token`` (or a generated one) once it is fit to be ``name``'s; aborts with
        INVALID_ARGUMENT otherwise (the message never holds the token)."""
        tokens = self.director.tokens
        try:
            tok = check_token(token, "token") if token else new_token()
        except TextError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        if tokens.is_admin(tok):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "token: it is the admin token (a bot must never hold admin rights)")
        holder = tokens.holder(digest(tok))
        if holder is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"token: it is already the token of bot {holder}" if holder != name
                                else "token: it is the bot's current token")
        return tok

    async def ListBots(
        self, request: tpb.ListBotsRequest,
        context: Context[tpb.ListBotsRequest, tpb.ListBotsResponse],
    ) -> tpb.ListBotsResponse:
        created = await for_organizer(self.director.store.bot_created)
        streams = self._streams()  # counted once for the whole list
        return tpb.ListBotsResponse(bots=[self._bot(n, c, streams)
                                          for n, c in sorted(created.items())])

    async def AddBot(
        self, request: tpb.AddBotRequest,
        context: Context[tpb.AddBotRequest, tpb.AddBotResponse],
    ) -> tpb.AddBotResponse:
        name = request.name
        try:
            check_bot_name(name, "name")
        except TextError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        tok = await self._new_token(name, request.token, context)
        if not await for_organizer(self.director.store.add_bot, name, digest(tok)):
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"bot {name} is registered: rotate its token to change it")
        self.director.tokens.add(name, tok)
        self._told()
        log.info("bot_added", bot=name)
        return tpb.AddBotResponse(bot=self._bot(name, await self._registered(name)), token=tok)

    async def RotateBotToken(
        self, request: tpb.RotateBotTokenRequest,
        context: Context[tpb.RotateBotTokenRequest, tpb.RotateBotTokenResponse],
    ) -> tpb.RotateBotTokenResponse:
        name = request.name
        if name not in await for_organizer(self.director.store.bot_created):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no registered bot {clip(name)}")
        tok = await self._new_token(name, request.token, context)
        await for_organizer(self.director.store.set_bot_token, name, digest(tok))
        self.director.tokens.remove(name)
        self.director.tokens.add(name, tok)
        ended = self._end_streams(name, "the bot's token was rotated by the organizer: "
                                        "connect with the new token")
        log.info("bot_token_rotated", bot=name, streams_ended=ended)
        return tpb.RotateBotTokenResponse(bot=self._bot(name, await self._registered(name)),
                                          token=tok, streams_ended=ended)

    async def RevokeBot(
        self, request: tpb.RevokeBotRequest,
        context: Context[tpb.RevokeBotRequest, tpb.RevokeBotResponse],
    ) -> tpb.RevokeBotResponse:
        name = request.name
        if not await for_organizer(self.director.store.remove_bot, name):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no registered bot {clip(name)}")
        self.director.tokens.remove(name)
        ended = self._end_streams(name, "the bot's token was revoked by the organizer")
        log.info("bot_revoked", bot=name, streams_ended=ended)
        return tpb.RevokeBotResponse(streams_ended=ended)

    async def ListConnectedBots(
        self, request: tpb.ListConnectedBotsRequest,
        context: Context[tpb.ListConnectedBotsRequest, tpb.ListConnectedBotsResponse],
    ) -> tpb.ListConnectedBotsResponse:
        counts = self._streams()
        return tpb.ListConnectedBotsResponse(bots=[
            tpb.ConnectedBot(name=b, streams=c.streams, seated=c.seated, idle=c.idle,
                             other=c.other, processes=n)
            for b, (c, n) in sorted(counts.items())])
