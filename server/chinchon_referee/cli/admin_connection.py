"""The connection of ``chinchon admin`` to a referee: target, TLS, the admin token, and
what a failed call means for the exit code (0 ok, 1 the server said no, 2 usage or
connection errors)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from rich.console import Console
from rich.markup import escape

from .secrets import SecretError, client_admin_token

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
#: Codes that mean the server could not be reached (or went away), not that it said no.
UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


class UsageError(Exception):
    """A command line that cannot be run (exit 2); the message says why."""


@dataclass
class Admin:
    """A channel to the referee's admin service, and the metadata of every call."""
    channel: grpc.Channel
    stub: tpb_grpc.TournamentServiceStub
    metadata: tuple[tuple[str, str], ...]
    target: str
    timeout: float
    #: The channel speaks TLS (``--root-cert`` or ``--tls``).
    tls: bool = False

    def transport_hint(self) -> str | None:
        """After a failure to connect: what to fix when the server speaks TLS and this
        channel does not, or the reverse (None otherwise)."""
        from chinchon.wire.transport import tls_mismatch  # the error path only

        return tls_mismatch(self.target, self.tls)

    def call(self, method: Callable[..., Any], request: Any) -> Any:
        return method(request, metadata=self.metadata, timeout=self.timeout)

    def close(self) -> None:
        self.channel.close()


def connect(args: argparse.Namespace) -> Admin:
    """The channel the options ask for; UsageError if a token or certificate is missing."""
    try:
        token = client_admin_token(args.admin_token, args.admin_token_file).token
    except SecretError as e:
        raise UsageError(str(e)) from None
    if args.root_cert:
        try:
            root = Path(args.root_cert).read_bytes()
        except OSError as e:
            raise UsageError(f"--root-cert: cannot read {args.root_cert}: {e.strerror}") from None
        channel = grpc.secure_channel(args.target, grpc.ssl_channel_credentials(root))
    elif args.tls:
        channel = grpc.secure_channel(args.target, grpc.ssl_channel_credentials())
    else:
        channel = grpc.insecure_channel(args.target)
    # The generated gRPC module has no annotations (grpc_tools writes none for it).
    stub = tpb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
    return Admin(channel, stub, (("authorization", f"Bearer {token}"),), args.target,
                 args.timeout, tls=bool(args.root_cert or args.tls))


def explain(e: grpc.RpcError, admin: Admin) -> int:
    """Print why a call failed; the exit code it means."""
    code, details, target = e.code(), e.details() or "", admin.target
    hint = admin.transport_hint() if code is grpc.StatusCode.UNAVAILABLE else None
    if hint is not None:
        err_console.print(f"[bold red]error:[/] {escape(target)}: {escape(hint)} "
                          f"(gRPC: {code.name}: {escape(details)})")
        return EXIT_USAGE
    if code in UNREACHABLE:
        err_console.print(f"[bold red]error:[/] cannot reach the referee at {escape(target)} "
                          f"({code.name}: {escape(details)})")
        return EXIT_USAGE
    err_console.print(f"[bold red]error:[/] {code.name}: {escape(details)}")
    return EXIT_REFUSED


def add_connection_options(p: argparse.ArgumentParser, defaults: bool) -> None:
    """The options of every ``chinchon admin`` command; given before or after the
    command (``defaults``: on the ``admin`` parser itself)."""
    d: Any = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    p.add_argument("--target", default=d("127.0.0.1:50051"),
                   help="HOST:PORT of the referee (default 127.0.0.1:50051)")
    p.add_argument("--root-cert", metavar="PEM", default=d(None),
                   help="TLS: trust the server certificate signed by this CA certificate")
    p.add_argument("--tls", action="store_true", default=d(False),
                   help="TLS with the system's trusted CAs (a public certificate)")
    p.add_argument("--admin-token-file", metavar="FILE", default=d(None),
                   help="read the admin token from FILE (e.g. the server's DB.admin-token)")
    p.add_argument("--admin-token", default=d(None),
                   help="the admin token (visible in ps: prefer $CHINCHON_ADMIN_TOKEN or "
                   "--admin-token-file)")
    p.add_argument("--timeout", type=float, default=d(60.0), metavar="SECONDS",
                   help="seconds a call may take (default 60; watch and export: none)")
