"""What every request passes before it is served, and what every response carries.

* The ``Host`` header must name this server (an IP address, localhost, the ``--http-url``
  host, a ``--http-allowed-host``, or this machine's names when it listens on every
  interface), else ``421``: a page of another site whose name was made to point here
  (DNS rebinding) cannot read the view.
* The client is the peer's address, or, from a ``--trusted-proxy`` only, the last
  address of ``X-Forwarded-For`` that is not a trusted proxy.
* Rates (token buckets: per client, and in all) and requests in flight (per client and
  in all) are bounded: past a bound, ``429`` with ``Retry-After``. The per-client table
  is bounded too: the least recently seen client is forgotten first.
* Every response, errors included, carries the Content-Security-Policy, ``nosniff`` and
  ``no-referrer``."""

from __future__ import annotations

import ipaddress
import math
import socket
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from ..host.buckets import Bucket
from .settings import CLIENT_IN_FLIGHT, GLOBAL_IN_FLIGHT, WebSettings

#: The request's client, as the guard counted it (its address, or X-Forwarded-For's).
CLIENT = web.RequestKey("client", str)

#: Content-Security-Policy of every response: nothing from anywhere but this server.
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'")
#: Clients whose buckets are kept (the least recently seen is forgotten past it).
MAX_CLIENTS = 4096
#: Paths of long-lived responses (event streams): bounded by Subscribers, not in flight.
STREAM_SUFFIXES = ("/events", "/live")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass
class Client:
    bucket: Bucket
    in_flight: int = 0


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


class Guard:
    def __init__(self, settings: WebSettings, bound_host: str = "127.0.0.1") -> None:
        self.settings = settings
        self.proxies = [ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies]
        self.hosts = self._allowed(settings, bound_host)
        self.clients: OrderedDict[str, Client] = OrderedDict()
        now = time.monotonic()
        self.all = Bucket(settings.global_rate, settings.global_rate * 2, settings.global_rate * 2, now)
        self.in_flight = 0
        #: Requests refused, by why: "host", "rate", "in_flight".
        self.refused: dict[str, int] = {"host": 0, "rate": 0, "in_flight": 0}

    @staticmethod
    def _allowed(settings: WebSettings, bound: str) -> set[str]:
        names = {"localhost", *(h.lower().rstrip(".") for h in settings.allowed_hosts)}
        if settings.url:
            host = urllib.parse.urlsplit(settings.url).hostname
            if host:
                names.add(host.lower().rstrip("."))
        if _address(bound) is None:
            names.add(bound.lower())
        elif _address(bound) in (ipaddress.ip_address("0.0.0.0"), ipaddress.ip_address("::")):
            # Every interface: the names this machine goes by on its network.
            for n in (socket.gethostname(), socket.getfqdn()):
                if n:
                    names.add(n.lower().rstrip("."))
        return names

    # -- who and where ------------------------------------------------------------------
    def host_ok(self, request: web.Request) -> bool:
        host = request.headers.get("Host")
        if host is None:
            return True  # HTTP/1.0 without one: no browser (DNS rebinding needs one)
        name = urllib.parse.urlsplit("//" + host).hostname
        if name is None:
            return False
        name = name.lower().rstrip(".")
        return (_address(name) is not None or name in self.hosts
                or name.endswith(".localhost"))

    def _trusted(self, addr: Address | None) -> bool:
        return addr is not None and any(addr in net for net in self.proxies)

    def client_of(self, request: web.Request) -> str:
        """The client's address: the peer's, or behind a trusted proxy, the nearest
        address of X-Forwarded-For that is not one of the trusted proxies."""
        peer = request.remote or ""
        if not self.proxies or not self._trusted(_address(peer)):
            return peer
        hops = [h.strip() for h in ",".join(request.headers.getall("X-Forwarded-For", [])).split(",")]
        for hop in reversed([h for h in hops if h]):
            addr = _address(hop)
            if addr is None:
                return peer  # unreadable: the proxy's own address, not a made-up one
            if not self._trusted(addr):
                return str(addr)
        return peer

    # -- limits -------------------------------------------------------------------------
    def _client(self, key: str, now: float) -> Client:
        c = self.clients.get(key)
        if c is None:
            if len(self.clients) >= MAX_CLIENTS:
                for k, old in self.clients.items():  # the least recently seen, idle
                    if old.in_flight == 0:
                        del self.clients[k]
                        break
            rate = self.settings.client_rate
            c = self.clients[key] = Client(Bucket(rate, rate * 4, rate * 4, now))
        else:
            self.clients.move_to_end(key)
        return c

    def admit(self, client: str, stream: bool) -> Client:
        """Take a token for ``client`` (and one of all); count it in flight unless it is
        an event stream. 429 with Retry-After when a bound is reached."""
        now = time.monotonic()
        c = self._client(client, now)
        wait = c.bucket.take(now)
        if wait == 0 and (wait := self.all.take(now)) > 0:
            c.bucket.tokens += 1  # not this client's fault: give its token back
        if wait > 0:
            self.refused["rate"] += 1
            raise _too_many("too many requests: slow down", wait)
        if not stream:
            if c.in_flight >= CLIENT_IN_FLIGHT or self.in_flight >= GLOBAL_IN_FLIGHT:
                self.refused["in_flight"] += 1
                raise _too_many("too many requests at once: wait for the answers", 1.0)
            c.in_flight += 1
            self.in_flight += 1
        return c

    def done(self, c: Client) -> None:
        c.in_flight -= 1
        self.in_flight -= 1

    # -- the middleware -----------------------------------------------------------------
    def middleware(self, busy: Callable[[web.Request, bool], None]
                   ) -> Callable[..., Awaitable[web.StreamResponse]]:
        """The middleware; ``busy(request, on)`` marks the request's connection as
        answering (on) or idle again (off), for the connection bounds (serving.py)."""

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            busy(request, True)
            try:
                if not self.host_ok(request):
                    self.refused["host"] += 1
                    raise web.HTTPMisdirectedRequest(
                        text="this server does not answer to that host name (give it "
                        "with --http-allowed-host if it is this server's)")
                client = self.client_of(request)
                request[CLIENT] = client
                stream = request.path.endswith(STREAM_SUFFIXES)
                c = self.admit(client, stream)
                try:
                    return await handler(request)
                finally:
                    if not stream:
                        self.done(c)
            finally:
                busy(request, False)

        return guard


def _too_many(text: str, wait: float) -> web.HTTPTooManyRequests:
    return web.HTTPTooManyRequests(text=text, headers={"Retry-After": str(max(1, math.ceil(wait)))})


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: every response, errors and streams included."""
    h = response.headers
    h.setdefault("Content-Security-Policy", CSP)
    h.setdefault("X-Content-Type-Options", "nosniff")
    h.setdefault("Referrer-Policy", "no-referrer")
