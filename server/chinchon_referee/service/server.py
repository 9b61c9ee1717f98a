"""Build and start the gRPC server: referee service, health, reflection, auth."""

from __future__ import annotations

import asyncio
import gc
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from chinchon.v1 import ladder_pb2, referee_pb2, tournament_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

from ..auth import AuthInterceptor, TokenBook
from ..config import RefereeConfig
from ..logs import get_logger
from ..referee import Referee, RefereeServicer
from .reflection import add_reflection
from .unavailable import StoreErrorInterceptor

log = get_logger("server")


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    referee: Referee
    tokens: TokenBook
    health: health_aio.HealthServicer
    extras: dict[str, Any] = field(default_factory=dict)
    #: The Unix domain socket it also listens on (``start_server(unix=...)``), or None.
    unix: Path | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def unix_target(self) -> str:
        """Its Unix socket as a gRPC target, ``unix:PATH`` (ValueError if it has none)."""
        if self.unix is None:
            raise ValueError("this server listens on TCP only")
        return f"unix:{self.unix}"

    async def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown.

        1. Health turns NOT_SERVING; no game starts any more, and new Play streams are
           refused (UNAVAILABLE, "the referee is shutting down").
        2. The streams of bots waiting in the lobby end at once (UNAVAILABLE, saying why),
           and so does each stream whose game ends from now on.
        3. Games in progress have ``grace`` seconds to end; their results count.
        4. Games still running then are stopped: they have no result (a tournament plays
           them again, from a new deal, when it resumes), and their bots' streams end
           with UNAVAILABLE saying so. No bot forfeits because the referee stopped.
        5. Other calls (health watches, tournament watches) are cancelled, after the
           grace or :data:`STATUS_FLUSH` (0.2 s) if that is longer, which leaves the
           statuses of step 2 and 4 the time to be sent.
        """
        await self.health.enter_graceful_shutdown()
        why = "the referee is shutting down"
        idle = self.referee.begin_shutdown(why)
        log.info("lobby_closed", streams=idle, games_running=self.referee.games_running)
        if not await self.referee.wait_games(grace):
            stopped = await self.referee.end_streams(
                f"{why}: the game in progress was stopped before its end and does not count")
            log.warning("games_stopped", games=stopped)
        await self.referee.end_streams(why)  # any other (a practice bot waiting for a partner)
        # The streams just ended still have their status to send. gRPC cancels whatever
        # is left when the grace runs out, with a GOAWAY of code 2 on every connection,
        # and a client that reads that GOAWAY before the status gets INTERNAL (grpc-js)
        # instead of "UNAVAILABLE: the referee is shutting down". So even a stop "at
        # once" waits for the calls to end, briefly: the Play calls end as soon as their
        # status is out, and only the watches (health, tournaments) take the whole floor.
        await self.server.stop(min(max(grace, STATUS_FLUSH), 0.5))
        await self.referee.close_workers()


def server_options(config: RefereeConfig) -> list[tuple[str, Any]]:
    lim = config.limits
    return [
        # The organizer's service takes larger messages (a declaration of many bots);
        # Play streams are held to their own limit as each message is read
        # (Connection.read_loop).
        ("grpc.max_receive_message_length",
         max(lim.max_message_bytes, lim.max_admin_message_bytes)),
        ("grpc.max_send_message_length", lim.max_send_bytes),
        ("grpc.keepalive_time_ms", int(lim.keepalive_time * 1000)),
        ("grpc.keepalive_timeout_ms", int(lim.keepalive_timeout * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", int(lim.min_client_ping * 1000)),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.so_reuseport", 0),
    ]


#: The least time the final stop leaves the calls to end (the statuses of the streams
#: just ended to be sent) before gRPC cancels them (``RunningServer.stop``).
STATUS_FLUSH = 0.2

LOOPS = ("auto", "uvloop", "asyncio")


def use_loop(kind: str = "auto") -> str:
    """Choose the event loop for the next ``asyncio.run``: ``uvloop`` (the default when
    it is installed) or ``asyncio``'s own. Returns the name of the loop chosen."""
    if kind not in LOOPS:
        raise ValueError(f"unknown event loop '{kind}': choose {', '.join(LOOPS)}")
    if kind in ("auto", "uvloop"):
        try:
            import uvloop
        except ImportError:
            if kind == "uvloop":
                raise ValueError("--loop uvloop: uvloop is not installed") from None
        else:
            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
            return "uvloop"
    asyncio.set_event_loop_policy(None)
    return "asyncio"


def tune_gc() -> None:
    """Garbage-collector settings for a process that is a referee server.

    Everything allocated so far (modules, protobuf descriptors, gRPC) lives as long as
    the process: ``gc.freeze`` takes it out of every later collection. Games allocate
    and free many short-lived objects per decision; a larger first-generation threshold
    runs the young collections less often (reference counting frees almost all of them
    anyway). ``chinchon serve`` calls this once, after startup.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def add_referee_service(server: grpc.aio.Server, servicer: RefereeServicer) -> None:
    """Register ``chinchon.v1.RefereeService`` as the generated code would, except that
    PlayResponses and PlayRequests cross as bytes: the referee writes responses it has
    encoded (see ``chinchon.wire.fast``, and ``Connection.send``) and reads requests itself."""
    play: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
        servicer.Play,
        # Requests arrive as bytes: the referee reads the common answer without
        # building a message (Connection.read_loop), and parses everything else.
        request_deserializer=None,
        # Responses leave as bytes (no serializer called per message).
        response_serializer=None,
    )
    handlers = {"Play": play}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("chinchon.v1.RefereeService", handlers),))
    server.add_registered_method_handlers("chinchon.v1.RefereeService", handlers)


async def start_server(
    address: str = "127.0.0.1:0",
    config: RefereeConfig | None = None,
    tokens: TokenBook | None = None,
    tls: tuple[bytes, bytes] | None = None,
    referee: Referee | None = None,
    add_services: Callable[[grpc.aio.Server, Referee, TokenBook], dict[str, Any]] | None = None,
    unix: Path | None = None,
) -> RunningServer:
    """The referee's gRPC server on ``address`` (TCP) and, with ``unix``, also on a Unix
    domain socket made at that path (plaintext: what a sandboxed bot reaches, having no
    network; :func:`listen_unix`). OSError if it cannot listen."""
    config = config or RefereeConfig()
    tokens = tokens or TokenBook()
    referee = referee or Referee(config)
    server = grpc.aio.server(
        interceptors=[AuthInterceptor(tokens), StoreErrorInterceptor()], options=server_options(config)
    )
    add_referee_service(server, RefereeServicer(referee, tokens))
    extras = add_services(server, referee, tokens) if add_services else {}
    hs = health_aio.HealthServicer()  # the asyncio servicer, on the server's loop
    health_pb2_grpc.add_HealthServicer_to_server(hs, server)
    names = [
        referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name,
        tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name,
        ladder_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
    ]
    add_reflection(server, names)  # the protos' comments included (grpcurl describe)
    if tls is not None:
        creds = grpc.ssl_server_credentials([(tls[1], tls[0])])
        port = server.add_secure_port(address, creds)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    if unix is not None:
        listen_unix(server, unix)
    await server.start()
    for svc in [*names, ""]:
        await hs.set(svc, health_pb2.HealthCheckResponse.SERVING)
    log.info("listening", address=address, port=port, tls=tls is not None,
             unix=str(unix) if unix else None)
    return RunningServer(server, port, referee, tokens, hs, extras, unix)


#: The longest path of a Unix socket (``sun_path`` is 108 bytes, NUL included).
UNIX_PATH_MAX = 107


def listen_unix(server: grpc.aio.Server, path: Path) -> None:
    """Listen on a Unix domain socket at ``path`` too (plaintext: the socket's own
    permissions, and where it is bound, decide who reaches it; the bots still need their
    tokens). A socket file left there by an earlier run is replaced; anything else there
    is an error, as is a path too long for a socket. OSError if it cannot be bound."""
    if len(os.fsencode(path)) > UNIX_PATH_MAX:
        raise OSError(f"{path}: too long for a Unix socket (at most {UNIX_PATH_MAX} bytes)")
    if path.is_symlink() or (path.exists() and not stat.S_ISSOCK(path.stat().st_mode)):
        raise OSError(f"{path}: exists and is not a socket")
    path.unlink(missing_ok=True)
    if server.add_insecure_port(f"unix:{path}") == 0:
        raise OSError(f"cannot listen on the Unix socket {path}")
