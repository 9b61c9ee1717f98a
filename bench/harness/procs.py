"""The benchmarks' processes: spawned children with a pipe each, the event loops of their
servers and clients (as ``chinchon serve`` chooses them), and a raw ``grpc.aio`` server."""

from __future__ import annotations

import multiprocessing as mp
import os
from typing import Any


def recv(pipe: Any, timeout: float, what: str) -> Any:
    if not pipe.poll(timeout):
        raise TimeoutError(f"no answer from {what} within {timeout:g} s")
    return pipe.recv()


async def raw_server(service: str, method: str, handler: Any) -> tuple[Any, int]:
    """A started ``grpc.aio`` server on 127.0.0.1 with one bidi method of raw bytes
    (``handler(requests, context)``), and its port."""
    import grpc

    generic = grpc.method_handlers_generic_handler(
        service, {method: grpc.stream_stream_rpc_method_handler(handler)})
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((generic,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


def server_loop() -> None:
    """The event loop of the server processes (echo and referee alike), as
    ``chinchon serve --loop`` chooses it."""
    from chinchon_referee.service.server import use_loop

    use_loop(os.environ.get("BENCH_LOOP", "auto"))


def client_loop() -> None:
    """The event loop of the client processes (echo clients and bots alike)."""
    from chinchon_referee.service.server import use_loop

    use_loop(os.environ.get("BENCH_CLIENT_LOOP", "asyncio"))


class Procs:
    """Child processes (spawned, so no gRPC state is forked) with a pipe each."""

    def __init__(self) -> None:
        self.ctx = mp.get_context("spawn")
        self.items: list[tuple[Any, Any]] = []

    def start(self, target: Any, *args: Any) -> tuple[Any, Any]:
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=target, args=(child, *args), daemon=True)
        p.start()
        self.items.append((p, parent))
        return p, parent

    def reap(self, timeout: float = 10) -> None:
        for p, _ in self.items:
            p.join(timeout)
            if p.is_alive():
                p.terminate()
                p.join(5)
        self.items.clear()

