"""A submitted bot's manifest, ``bot.toml`` at the top of its folder: how to build it
and how to run it, in which runtime.

    name = "my-bot"                       # its name (letters, digits, '-', '_')
    runtime = "python3"                   # python3 | node | binary
    build = ["make", "-j2"]               # optional: run once, in its sandbox, no network
    run = ["{python}", "bot.py"]          # its command ({python}: the referee's Python,
                                          # with the SDK); --target is appended
    build_timeout = 300                   # seconds (optional: within the organizer's
                                          # --build-timeout, which wins when lower)

    [limits]                              # optional, within the organizer's: the
    memory_mb = 256                       # tighter wins (a 0 of cpu_seconds, none,
                                          # never lifts the organizer's bound)

Paths in ``build`` and ``run`` are the submission's own (both run in its folder). Every
bot and build reads the protocol's ``.proto`` files at ``/run/chinchon/protos``
(``CHINCHON_PROTOS``: :mod:`.sandbox`). A ``python3`` bot may import the SDK
(``chinchon.sdk``); a ``node`` bot brings its ``node_modules`` (the build has no
network: ``npm ci`` cannot run there); a ``binary`` is built by ``build`` (against the
system's libraries, e.g. libgrpc++) or shipped, for this machine. Each sample folder
(``sample_bots/python``, ``node``, ``cpp``) is a submission as it is (docs/bots.md).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..declarations import toml
from ..declarations.errors import FieldError
from ..texts import shown

MANIFEST = "bot.toml"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
_KEYS = {"name", "runtime", "build", "run", "build_timeout", "limits"}


#: A manifest that cannot be used: the declarations' one error, naming the key and the
#: file (its name of old, which callers catch).
ManifestError = FieldError


class Runtime(enum.Enum):
    PYTHON3 = "python3"
    NODE = "node"
    BINARY = "binary"


@dataclass(frozen=True)
class Manifest:
    name: str
    runtime: Runtime
    run: tuple[str, ...]
    build: tuple[str, ...] = ()
    #: Seconds its build may take (None: the organizer's bound; never above it).
    build_timeout: float | None = None
    #: Limits the bot asks for (applied within the organizer's: :meth:`.Limits.within`).
    limits: dict[str, Any] | None = None

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        path = folder / MANIFEST
        data = toml.read(path, missing=f"{path}: no manifest (a submission has a {MANIFEST}: "
                         "name, runtime, run, and build if it needs one)")
        return cls.parse(data, path)

    @classmethod
    def parse(cls, data: dict[str, Any], path: Path) -> Manifest:
        where = str(path)
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise ManifestError("", f"unknown key {shown(unknown[0])} (known: "
                                f"{', '.join(sorted(_KEYS))})", file=where)
        name = data.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ManifestError("name", f"1 to 32 letters, digits, '-' or '_', got {shown(name)}",
                                file=where)
        try:
            runtime = Runtime(data.get("runtime"))
        except ValueError:
            raise ManifestError("runtime", f"one of {', '.join(r.value for r in Runtime)}, "
                                f"got {shown(data.get('runtime'))}", file=where) from None
        run, build = _argv(data, "run", where), _argv(data, "build", where)
        if not run:
            raise ManifestError("run", "the bot's command, e.g. [\"{python}\", \"bot.py\"]",
                                file=where)
        timeout = data.get("build_timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                    or not 1 <= timeout <= 3600):
            raise ManifestError("build_timeout", f"1 to 3600 seconds, got {shown(timeout)}",
                                file=where)
        limits = data.get("limits")
        if limits is not None and not isinstance(limits, dict):
            raise ManifestError("limits", "a table ([limits])", file=where)
        return cls(name, runtime, run, build, None if timeout is None else float(timeout), limits)


def _argv(data: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        raise ManifestError(key, "a list of strings (the program and its arguments), not one "
                            f"string: [{shown(value)}]?", file=where)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ManifestError(key, "a list of strings (the program and its arguments)", file=where)
    return tuple(value)
