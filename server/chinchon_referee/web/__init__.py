"""The web view: tournaments, live games and replays in a browser (docs/web.md)."""

from .app import WebApp, WebContext
from .serving import RunningWeb, parse_http, start_web

__all__ = ["RunningWeb", "WebApp", "WebContext", "parse_http", "start_web"]
