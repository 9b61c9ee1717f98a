"""The web view: tournaments, live games and replays in a browser (docs/web.md).

The referee's side (``start_web``, ``WebContext``: spawn.py) loads the referee; the web
process itself (process.py) does not, so the names are loaded when first asked for."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .serving import RunningWeb
    from .settings import WebSettings, parse_http
    from .spawn import WebContext, listen_feed, start_web

_WHERE = {"RunningWeb": "serving", "parse_http": "settings", "WebContext": "spawn",
          "start_web": "spawn", "listen_feed": "spawn", "WebSettings": "settings"}

__all__ = ["RunningWeb", "WebContext", "WebSettings", "listen_feed", "parse_http", "start_web"]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
