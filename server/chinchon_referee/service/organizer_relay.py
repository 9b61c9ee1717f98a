"""The organizer's heavy calls relayed to its worker process, as bytes.

``chinchon.v1.TournamentService`` is registered as the generated code would, except
that the calls of :data:`RELAYED` and :data:`STREAMED` cross this process as bytes: the
request is not parsed, it is written to the worker (organizer_process.py), and the
worker's answer is written back unread, one message at a time for ExportRecords (gRPC's
flow control holds the worker back while the client reads slowly: this process never
holds more than a few messages of an export). CreateTournament's declaration is planned
and stored by the worker too; this process then registers its new tokens, counts its
bots and starts it (:meth:`Director.adopt`), all cheap. Every other call (start, cancel,
watch, the bots' tokens, the server's status) changes or reads this process's own state
and stays here.

A status the worker answers with is the caller's, word for word. A worker that dies
mid-call, or is starting again, is UNAVAILABLE for the caller, saying so; the next call
waits for the worker started again (organizer_spawn.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from ..director.director import Director
from ..host.pools import for_organizer
from ..logs import get_logger
from .organizer_spawn import OrganizerWorker, WorkerAway

log = get_logger("organizer")

SERVICE = "chinchon.v1.TournamentService"
#: Unary calls answered by the worker alone.
RELAYED = ("ListTournaments", "GetStandings", "ListGames", "GetGameRecord", "ExportResults")
#: Streamed calls answered by the worker alone.
STREAMED = ("ExportRecords",)
#: Codes of a worker's answer that are the call's own (the worker's handlers abort
#: with them); any other status means the worker failed, and the caller is told so.
ANSWERS = frozenset({
    grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN,
})
#: The worker's own UNAVAILABLE (the database out of reach: unavailable.py) begins so.
STORE_AWAY = "the referee's database"

Context = grpc.aio.ServicerContext


class Capture:
    """Takes the handlers the generated code registers, to register them changed."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str,
                                       handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]) -> None:
        self.handlers.update(handlers)


def generated_handlers(add: Callable[[Any, Any], None],
                       servicer: Any) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """The handlers the generated ``add_..._to_server`` function ``add`` registers for
    ``servicer``, to register them changed."""
    capture = Capture()
    add(servicer, capture)
    return dict(capture.handlers)


async def _failed(context: Context[Any, Any], e: grpc.aio.AioRpcError | WorkerAway,
                  method: str) -> None:
    """End the call as the worker's answer said, or UNAVAILABLE if the worker failed."""
    if isinstance(e, grpc.aio.AioRpcError):
        code, details = e.code(), e.details() or ""
        if code in ANSWERS or (code is grpc.StatusCode.UNAVAILABLE
                               and details.startswith(STORE_AWAY)):
            await context.abort(code, details)
        why = f"the organizer's worker process ended during the call ({code.name})"
    else:
        why = str(e)
    log.warning("organizer_call_failed", method=method, why=why)
    await context.abort(grpc.StatusCode.UNAVAILABLE, f"{why}: try again")


class Relay:
    """The calls to ``worker``, as handlers of this process's server (of ``service``:
    TournamentService unless told)."""

    def __init__(self, worker: OrganizerWorker) -> None:
        self.worker = worker

    def unary(self, method: str, service: str = SERVICE
              ) -> Callable[[bytes, Context[Any, Any]], Awaitable[bytes]]:
        path = f"/{service}/{method}"

        async def relayed(request: bytes, context: Context[Any, Any]) -> bytes:
            try:
                channel = await self.worker.channel_now(context.time_remaining())
                call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(path)
                return await call(request, timeout=context.time_remaining())
            except (grpc.aio.AioRpcError, WorkerAway) as e:
                await _failed(context, e, method)
                raise AssertionError("aborted") from None

        return relayed

    def stream(self, method: str, service: str = SERVICE
               ) -> Callable[[bytes, Context[Any, Any]], AsyncIterator[bytes]]:
        path = f"/{service}/{method}"

        async def relayed(request: bytes, context: Context[Any, Any]) -> AsyncIterator[bytes]:
            call: grpc.aio.UnaryStreamCall[bytes, bytes] | None = None
            try:
                channel = await self.worker.channel_now(context.time_remaining())
                open_: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(path)
                call = open_(request, timeout=context.time_remaining())
                async for message in call:
                    yield message
            except (grpc.aio.AioRpcError, WorkerAway) as e:
                await _failed(context, e, method)
            finally:
                if call is not None:
                    call.cancel()  # the caller went away: the worker stops reading

        return relayed


class TournamentRelay(Relay):
    """The tournament calls relayed; CreateTournament's declaration adopted here."""

    def __init__(self, worker: OrganizerWorker, director: Director,
                 info: Callable[[str], Awaitable[tpb.TournamentInfo]]) -> None:
        super().__init__(worker)
        self.director, self.info = director, info

    async def create(self, request: bytes, context: Context[Any, Any]) -> tpb.CreateTournamentResponse:
        """CreateTournament: declared by the worker; its tokens, bots and start here."""
        answer = await self.unary("CreateTournament")(request, context)
        made = tpb.CreateTournamentResponse.FromString(answer)
        tid = made.tournament.id
        director = self.director
        director.adopt(tid, [(p.name, p.token) for p in made.participants])
        row = await for_organizer(director.store.tournament, tid)
        if row is not None and row.spec.get("start") != "manual":
            director.start(tid)
        made.tournament.CopyFrom(await self.info(tid))
        return made


def add_tournament_service(server: grpc.aio.Server, servicer: Any, director: Director,
                           info: Callable[[str], Awaitable[tpb.TournamentInfo]],
                           worker: OrganizerWorker | None) -> None:
    """``chinchon.v1.TournamentService`` on ``server``: its heavy calls relayed to
    ``worker`` (None: every call answered here, in the organizer's pool). ``servicer``
    answers the others; ``info`` reads a tournament's info here."""
    if worker is None:
        # The generated gRPC module has no annotations (grpc_tools writes none for it).
        tpb_grpc.add_TournamentServiceServicer_to_server(  # type: ignore[no-untyped-call]
            servicer, server)
        return
    handlers = generated_handlers(tpb_grpc.add_TournamentServiceServicer_to_server, servicer)
    relay = TournamentRelay(worker, director, info)
    for method in RELAYED:  # bytes in, bytes out: no (de)serializer
        handlers[method] = grpc.unary_unary_rpc_method_handler(relay.unary(method))
    for method in STREAMED:
        handlers[method] = grpc.unary_stream_rpc_method_handler(relay.stream(method))
    handlers["CreateTournament"] = grpc.unary_unary_rpc_method_handler(
        relay.create, response_serializer=tpb.CreateTournamentResponse.SerializeToString)
    register(server, SERVICE, handlers)


def register(server: grpc.aio.Server, service: str,
             handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]) -> None:
    """``handlers`` as ``service``'s methods on ``server`` (as the generated code does)."""
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)
