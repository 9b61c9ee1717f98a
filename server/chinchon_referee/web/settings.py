"""The web view's settings: whom it believes, which names it answers to, and the bounds
on what any client may make it do (docs/security.md#a-spectator). Plain data, passed
to the web process in its feed's first message (never on a command line)."""

from __future__ import annotations

import argparse
import ipaddress
import math
from dataclasses import asdict, dataclass, fields
from typing import Any

#: Requests answered at once from one client, and in all (event streams not counted:
#: they have their own bounds).
CLIENT_IN_FLIGHT = 8
GLOBAL_IN_FLIGHT = 128
#: The web process's nice value above the referee's: its CPU yields to the games.
NICE = 10
#: The host the web view listens on when ``--http`` names none: only this machine.
DEFAULT_HOST = "127.0.0.1"


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1: only this machine, unless
    a host is given); ValueError saying what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {text}: give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)")
    return host, int(port)


@dataclass(frozen=True)
class WebSettings:
    #: Addresses or networks of reverse proxies whose ``X-Forwarded-For`` is believed
    #: (nobody else's is): behind one, each viewer is counted by its own address.
    trusted_proxies: tuple[str, ...] = ()
    #: Host names the web view answers to besides the defaults (IP addresses, localhost,
    #: the host of ``url``, this machine's names when it listens on every interface).
    allowed_hosts: tuple[str, ...] = ()
    #: The URL at which browsers reach it (``--http-url``), "" if not given.
    url: str = ""
    #: Connections open at once (past it, the oldest idle one is closed for a new one).
    max_connections: int = 1000
    #: Seconds a connection may take to send a request's head once it began sending one
    #: (slowloris), and may stay idle between requests (keep-alive).
    header_timeout: float = 10.0
    keepalive_timeout: float = 15.0
    #: Requests per second per client (a burst of 4 seconds' worth at once), and in all.
    client_rate: float = 30.0
    global_rate: float = 2000.0
    #: Live event streams at once, in all and per client.
    max_streams: int = 200
    max_streams_per_client: int = 20
    #: Seconds an event stream may wait for its client to read before it is ended.
    stream_write_timeout: float = 10.0
    #: Bytes of finished games' replays and records kept ready to send.
    cache_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_streams", "max_streams_per_client", "cache_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: a whole number, 1 or more (got {v!r})")
        for name in ("header_timeout", "keepalive_timeout", "client_rate", "global_rate",
                     "stream_write_timeout"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                    or not 0 < v <= 86_400:
                raise ValueError(f"{name}: a number above 0 (got {v!r})")
        for p in self.trusted_proxies:
            try:
                ipaddress.ip_network(p, strict=False)
            except ValueError:
                raise ValueError(f"--trusted-proxy {p}: give an IP address or a network "
                                 "(e.g. 10.0.0.5 or 10.0.0.0/24)") from None
        for h in self.allowed_hosts:
            if not h or any(c in h for c in "/ @?#"):
                raise ValueError(f"--http-allowed-host {h!r}: give a host name, e.g. "
                                 "chinchon.example.org")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["trusted_proxies"] = list(self.trusted_proxies)
        out["allowed_hosts"] = list(self.allowed_hosts)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WebSettings:
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        for k in ("trusted_proxies", "allowed_hosts"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)


def add_http_options(p: argparse.ArgumentParser) -> None:
    """The web view's options, alike for ``chinchon serve --http`` and ``chinchon web``."""
    d = WebSettings()
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="believe X-Forwarded-For from this reverse proxy only (an address "
                   "or a network; repeatable): viewers behind it are then counted each by "
                   "its own address")
    p.add_argument("--http-allowed-host", action="append", default=[], metavar="HOST",
                   help="a host name the web view answers to (repeatable; IP addresses, "
                   "localhost and the --http-url host always are): any other Host header "
                   "gets 421 (DNS rebinding)")
    p.add_argument("--http-max-connections", type=int, default=d.max_connections, metavar="N",
                   help=f"web connections open at once (default {d.max_connections})")
    p.add_argument("--http-client-rate", type=float, default=d.client_rate, metavar="R",
                   help="requests per second from one viewer, bursts of 4 s worth "
                   f"(default {d.client_rate:g}); past it 429")
    p.add_argument("--http-max-streams", type=int, default=d.max_streams, metavar="N",
                   help=f"live pages open at once (default {d.max_streams}; a tenth of "
                   "them from one viewer)")


def settings_from_args(args: argparse.Namespace, url: str = "") -> WebSettings:
    """ValueError naming the option for a bad value."""
    try:
        return WebSettings(
            trusted_proxies=tuple(args.trusted_proxy), allowed_hosts=tuple(args.http_allowed_host),
            url=url, max_connections=args.http_max_connections, client_rate=args.http_client_rate,
            max_streams=args.http_max_streams,
            max_streams_per_client=max(1, args.http_max_streams // 10))
    except ValueError as e:
        text = str(e)
        for name, opt in (("max_connections", "--http-max-connections"),
                          ("client_rate", "--http-client-rate"),
                          ("max_streams", "--http-max-streams")):
            text = text.replace(f"{name}:", f"{opt}:", 1) if text.startswith(name) else text
        raise ValueError(text) from None
