"""Start and stop the web view on a host and port (``--http HOST:PORT``)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from ..logs import get_logger
from .app import WebApp, WebContext

log = get_logger("web")

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


@dataclass
class RunningWeb:
    app: WebApp
    runner: web.AppRunner
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"http://{host}:{self.port}/"

    async def stop(self) -> None:
        await self.app.close()
        await self.runner.cleanup()


async def start_web(ctx: WebContext, host: str = DEFAULT_HOST, port: int = 0) -> RunningWeb:
    """Serve the web view on ``host:port`` from the running event loop; OSError if the
    address cannot be bound."""
    app = WebApp(ctx)
    runner = web.AppRunner(app.app(), handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1] if runner.addresses else port
    app.start_watching()
    log.info("web_listening", host=host, port=bound)
    return RunningWeb(app, runner, host, int(bound))
