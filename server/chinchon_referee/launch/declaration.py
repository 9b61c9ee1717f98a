"""Which launched bots run sandboxed, in which folder, with which limits: the
declaration's ``[sandbox]`` table and each participant's ``sandbox`` and ``folder``.

These keys concern ``chinchon tournament run`` (the process that launches the bots)
only: :func:`split` takes them out of the declaration before the tournament model
reads the rest (a referee run with ``chinchon serve`` launches nothing)::

    [sandbox]
    default = true          # every launched bot sandboxed (default: false)
    memory_mb = 256         # limits for all (launch/limits.py: the names and bounds)
    runtime = ["/opt/jdk"]  # more folders every sandbox may read (besides the system's
                            # and the Python running the referee)
    build_timeout = 300     # a submission's build (``chinchon bots check --declaration``):
    build_disk_mb = 256     # its time (a manifest may ask for less) and its area; the
    submission_mb = 256     # submission's apparent size and its entries (and those its
    submission_files = 20000  # build leaves): launch/build.py, launch/intake.py

    [[participants]]
    name = "stranger"
    folder = "bots/stranger"        # its folder, relative to the declaration: read-only
    command = ["{python}", "bot.py"] # run in its folder
    sandbox = { memory_mb = 128 }   # true, false, or its own limits (sandboxed)

A sandboxed bot needs its ``folder`` (nothing else of the organizer's is bound: naming
it is the organizer's choice of what the bot may read).

A submission (a folder with ``bot.toml``, :mod:`.manifest`, built by ``chinchon bots
check``) is a participant too, always sandboxed, its command its manifest's ``run``::

    [[participants]]
    name = "stranger"
    submission = "check-stranger/bot"

A folder that ``bots check`` built carries its record beside it (:mod:`.checked`): it
is played only if its check passed and nothing in it changed since (the manifest is
read after that). A folder without one is played as it is, unless its manifest has a
``build``: a build runs in ``bots check`` only, so such a folder is refused until it
is checked.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..declarations.bounds import in_range, number, whole
from ..declarations.errors import FieldError
from ..texts import clip, shown
from .build import DISK_MB, TIMEOUT_S, BuildBounds
from .checked import Record, RecordError
from .intake import FILES, SIZE_MB, Bounds
from .limits import Limits
from .manifest import Manifest

#: The keys of ``[sandbox]`` that bound a submission's intake and build (``bots check``).
_BOUNDS = {"build_timeout", "build_disk_mb", "submission_mb", "submission_files"}
#: The keys of ``[sandbox]`` that are not limits.
_OPTIONS = {"default", "runtime"} | _BOUNDS


#: A sandbox key of the declaration that cannot be used: the declarations' one error,
#: naming the key (its name of old, which callers catch).
DeclarationError = FieldError


@dataclass(frozen=True)
class BotPlan:
    """How one participant is launched: sandboxed or not, where, with which limits."""

    sandboxed: bool
    folder: Path | None
    limits: Limits


@dataclass(frozen=True)
class SandboxPlan:
    default: bool = False
    limits: Limits = field(default_factory=Limits)
    runtime: tuple[Path, ...] = ()
    bots: Mapping[str, BotPlan] = field(default_factory=dict)
    #: A submission's build and intake (``chinchon bots check --declaration``).
    build: BuildBounds = field(default_factory=BuildBounds)
    intake: Bounds = field(default_factory=Bounds)
    #: The keys of these bounds the declaration sets.
    bounded: frozenset[str] = frozenset()

    def of(self, name: str) -> BotPlan:
        return self.bots.get(name, BotPlan(self.default, None, self.limits))

    @property
    def sandboxed(self) -> list[str]:
        return sorted(n for n, b in self.bots.items() if b.sandboxed)

    @property
    def unsandboxed(self) -> list[str]:
        return sorted(n for n, b in self.bots.items() if not b.sandboxed)


def _whole(table: dict[str, Any], key: str, default: int, bound: tuple[int, int]) -> int:
    if key not in table:
        return default
    return in_range(whole(table[key], ("sandbox", key)), *bound, ("sandbox", key))


def _bounds(table: dict[str, Any]) -> tuple[BuildBounds, Bounds]:
    """The build's and the intake's bounds the table sets (FieldError naming a bad key)."""
    timeout = BuildBounds.timeout
    if "build_timeout" in table:
        timeout = number(table["build_timeout"], ("sandbox", "build_timeout"))
        if not TIMEOUT_S[0] <= timeout <= TIMEOUT_S[1]:
            raise FieldError(("sandbox", "build_timeout"),
                             f"{TIMEOUT_S[0]} to {TIMEOUT_S[1]} seconds, got {timeout:g}")
    disk = _whole(table, "build_disk_mb", BuildBounds.disk_mb, DISK_MB)
    size = _whole(table, "submission_mb", Bounds.size_mb, SIZE_MB)
    files = _whole(table, "submission_files", Bounds.files, FILES)
    return BuildBounds(disk, timeout, files), Bounds(size, files)


def table(data: dict[str, Any], base: Path) -> SandboxPlan:
    """The plan of the declaration's ``[sandbox]`` table alone (no participant's):
    what ``chinchon bots check --declaration`` checks a submission under."""
    default, limits, runtime, (building, intake), keys = _table(copy.deepcopy(data), base)
    return SandboxPlan(default, limits, runtime, {}, building, intake, keys)


def _table(data: dict[str, Any], base: Path) -> tuple[bool, Limits, tuple[Path, ...],
                                                      tuple[BuildBounds, Bounds], frozenset[str]]:
    table = data.pop("sandbox", {})
    if not isinstance(table, dict):
        raise DeclarationError("sandbox: a table ([sandbox]) of default, runtime and limits")
    default = table.get("default", False)
    if not isinstance(default, bool):
        raise DeclarationError(f"sandbox.default: true or false, got {shown(default)}")
    runtime = table.get("runtime", [])
    if not isinstance(runtime, list) or not all(isinstance(r, str) for r in runtime):
        raise DeclarationError("sandbox.runtime: a list of folders")
    limits = Limits().over({k: v for k, v in table.items() if k not in _OPTIONS})
    return (default, limits, tuple((base / r).resolve() for r in runtime), _bounds(table),
            frozenset(_BOUNDS & set(table)))


def _submission(p: dict[str, Any], where: str, base: Path, limits: Limits) -> BotPlan:
    """A participant declared as a submission: its manifest's command put in ``p``."""
    folder, own = p.pop("submission"), p.pop("sandbox", None)
    if not isinstance(folder, str):
        raise DeclarationError(f"{where}.submission: its folder, relative to the declaration")
    if "command" in p or "folder" in p or own is False:
        raise DeclarationError(f"{where}: a submission runs its manifest's command in its own "
                               "folder, sandboxed: no command, folder or sandbox = false")
    path = (base / folder).resolve()
    try:
        record = Record.read(path)
        if record is not None:
            record.verify(path)
        manifest = Manifest.read(path)
        mine = limits.over(own) if isinstance(own, dict) else limits
        mine = mine.within(manifest.limits or {})
    except (FieldError, RecordError) as e:
        # The submission's own error (its bot.toml, its limits, its check's record),
        # told as the participant's.
        raise DeclarationError(f"{where}.submission", str(e)) from None
    if record is None and manifest.build:
        raise DeclarationError(f"{where}.submission: {path} has a build and was not checked: "
                               f"chinchon bots check {folder} --out OUT, then submission = "
                               "\"OUT/bot\"")
    p["command"] = list(manifest.run)
    return BotPlan(True, path, mine)


def _bot(p: dict[str, Any], i: int, base: Path, default: bool, limits: Limits) -> BotPlan:
    where = f"participants[{i}] ({clip(str(p.get('name', '?')), quote='')})"
    if "submission" in p:
        return _submission(p, where, base, limits)
    own = p.pop("sandbox", None)
    folder = p.pop("folder", None)
    if own is not None and not isinstance(own, bool | dict):
        raise DeclarationError(f"{where}.sandbox: true, false or a table of limits")
    sandboxed = default if own is None else own is not False
    try:
        mine = limits.over(own) if isinstance(own, dict) else limits
    except FieldError as e:
        raise e.under(where) from None
    if folder is not None and not isinstance(folder, str):
        raise DeclarationError(f"{where}.folder: a folder, relative to the declaration")
    path = (base / folder).resolve() if folder is not None else None
    if sandboxed and path is None:
        raise DeclarationError(f"{where}: a sandboxed bot needs its folder (folder = \"...\": "
                               "the only one of yours it may read)")
    if path is not None and not path.is_dir():
        raise DeclarationError(f"{where}.folder: {path} is not a folder")
    return BotPlan(sandboxed, path, mine)


def split(data: dict[str, Any], base: Path) -> tuple[dict[str, Any], SandboxPlan]:
    """The declaration without its sandbox keys (for the tournament model), and the
    sandbox plan they make (FieldError naming a bad key). ``base``:
    the declaration's folder, which folders are relative to."""
    rest = copy.deepcopy(data)
    default, limits, runtime, (building, intake), keys = _table(rest, base)
    bots = {}
    parts = rest.get("participants")
    for i, p in enumerate(parts if isinstance(parts, list) else []):
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            bots[p["name"]] = _bot(p, i, base, default, limits)
    return rest, SandboxPlan(default, limits, runtime, bots, building, intake, keys)
