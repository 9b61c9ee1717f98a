"""``chinchon bots check SUBMISSION``: a submitted bot checked the way a tournament runs it.

A submission is a folder (or a ``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.xz``,
``.tar.bz2`` or ``.zip`` archive of one) with a manifest, ``bot.toml``
(:mod:`..launch.manifest`: its name, runtime, build and run commands). It is untrusted
from end to end. The check:

1. copies it, bounded (``--submission-mb`` of apparent size, ``--submission-files``
   entries; no devices, FIFOs, sockets, hard links or links leading out; no setuid,
   setgid or sticky bit; holes kept: :mod:`..launch.intake`), into ``OUT``
   (``--out``, default ``check-NAME/``: new or empty; made 0700), and reads its
   manifest (exit 2 naming what is refused or the key that is wrong);
2. builds it, if the manifest says how, in the bot's sandbox (no network, the same
   system-call filter, limits and cgroup) in a tmpfs of ``--build-disk-mb``, within
   ``--build-timeout`` seconds (a manifest's ``build_timeout`` may only ask for less),
   its output in ``OUT/build.log``; what it leaves is copied out to ``OUT/bot`` by the
   same bounded copy (:mod:`..launch.build`; exit 1 on a failed, timed-out or refused
   build, with the log's end);
3. reads the manifest again, from ``OUT/bot`` (what the build left is what runs), and
   pins that folder: ``OUT/bot.check.json`` records the digest of every entry
   (:mod:`..launch.checked`);
4. plays the practice conformance games (``chinchon practice``'s) with it sandboxed in
   ``OUT/bot``, read-only, reaching the referee through its Unix socket only; the
   report as ``chinchon practice`` prints it (exit 0 PASS, 1 FAIL), with how strict it
   was: any refused answer fails, or more than ``--max-refusals N`` over all games (a
   timeout, forfeit, protocol error or crash fails always). The record says whether
   it passed.

``--declaration FILE`` checks it under a tournament declaration's ``[sandbox]`` table
(:mod:`..launch.declaration`: its limits, runtime folders, ``build_timeout``,
``build_disk_mb``, ``submission_mb`` and ``submission_files``); a flag given beside it
only tightens the declaration's value.

``tournament run`` plays ``OUT/bot`` (``submission = "OUT/bot"`` in a participant) only
as it was checked: a failed check, or any entry added, removed or changed since, is
refused naming it (docs/security.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet
from chinchon.strategies import BUILTIN_BOTS
from rich.text import Text

from ..config import TimeControl
from ..declarations import toml
from ..declarations.errors import FieldError
from ..launch.build import BuildBounds, build
from ..launch.checked import Record
from ..launch.confine import Confinement
from ..launch.declaration import SandboxPlan, table
from ..launch.intake import Bounds, IntakeError, remove, take
from ..launch.launcher import python_command, sandboxed
from ..launch.limits import LimitError, Limits
from ..launch.manifest import Manifest, ManifestError
from ..launch.sandbox import SandboxUnavailable, python_runtime
from ..logs import configure
from ..service.server import use_loop
from .practice import add_strictness, console, print_report, run_practice

BUILD_LOG = "build.log"


def register(sub: Any) -> None:
    p = sub.add_parser("bots", help="submitted bots: check one (build it and play it, sandboxed)")
    bsub = p.add_subparsers(dest="bcommand", required=True, metavar="ACTION")
    c = bsub.add_parser("check", help="copy a submission (a folder or archive with bot.toml), "
                        "build it in the sandbox and play the practice conformance games "
                        "with it", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("folder", metavar="SUBMISSION",
                   help="the submission: a folder with bot.toml, or an archive of one")
    c.add_argument("--out", metavar="DIR", help="where its copy is built and the reports go "
                   "(default check-NAME/; new or empty)")
    c.add_argument("--games", type=int, default=4, help="practice games (default 4)")
    c.add_argument("--opponent", default="greedy", choices=sorted(BUILTIN_BOTS))
    c.add_argument("--seed", help="seed of the deals (default: random, printed)")
    c.add_argument("--per-move", type=float, default=2.0)
    c.add_argument("--bank", type=float, default=30.0)
    c.add_argument("--declaration", metavar="FILE",
                   help="check it under a tournament declaration's [sandbox] table: its "
                   "limits, build_timeout, build_disk_mb, submission_mb and submission_files "
                   "(a flag given beside it may only tighten them)")
    c.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="a sandbox limit, e.g. memory_mb=256 (launch/limits.py; repeatable)")
    c.add_argument("--submission-mb", type=int, metavar="MB",
                   help=f"the submission's apparent size, all files together (default "
                   f"{Bounds.size_mb})")
    c.add_argument("--submission-files", type=int, metavar="N",
                   help=f"its entries, and those its build leaves (default {Bounds.files})")
    c.add_argument("--build-disk-mb", type=int, metavar="MB",
                   help=f"the build's writable area, a tmpfs (default {BuildBounds.disk_mb})")
    c.add_argument("--build-timeout", type=float, metavar="S",
                   help=f"the build's time; a manifest may ask for less (default "
                   f"{BuildBounds.timeout:g})")
    add_strictness(c, 0)
    c.add_argument("--json", metavar="FILE", help="also write the practice report as JSON")
    c.add_argument("--log-level", default="warning")
    c.set_defaults(func=cmd_check)


@dataclass(frozen=True)
class Prepared:
    """A submission taken into ``out/submission``: its manifest (the build's), the
    organizer's limits (``organizer``; ``limits``: within the manifest's), bounds and
    runtime folders."""

    manifest: Manifest
    organizer: Limits
    limits: Limits
    build: BuildBounds
    runtime: tuple[Path, ...]
    out: Path


@dataclass(frozen=True)
class Organizer:
    """What the organizer checks a submission under: the declaration's ``[sandbox]``
    table (or the defaults), the flags given beside it tightening it."""

    limits: Limits
    intake: Bounds
    build: BuildBounds
    runtime: tuple[Path, ...]


def _tighter(declared: float, flag: float | None, declaration: bool) -> Any:
    """A bound: a flag's without a declaration, else the tighter of the two."""
    if flag is None:
        return declared
    return min(declared, flag) if declaration else flag


def _bounds(args: argparse.Namespace) -> Organizer | str:
    try:
        flags = Limits.from_pairs(args.limit)
        Bounds(_tighter(Bounds.size_mb, args.submission_mb, False),
               _tighter(Bounds.files, args.submission_files, False))
        BuildBounds(_tighter(BuildBounds.disk_mb, args.build_disk_mb, False),
                    _tighter(BuildBounds.timeout, args.build_timeout, False))
    except LimitError as e:
        return str(e)
    except IntakeError as e:
        return f"--submission-{str(e).replace('size_mb', 'mb')}"
    except ValueError as e:
        return f"--{str(e).replace('_', '-')}"
    plan = SandboxPlan()
    if args.declaration:
        path = Path(args.declaration)
        try:
            plan = table(toml.read(path), path.parent.resolve())
        except FieldError as e:
            return f"{path}: {e}"
    named = {pair.partition("=")[0] for pair in args.limit}
    limits = plan.limits.within({k: getattr(flags, k) for k in named}) if args.declaration \
        else flags
    declared = bool(args.declaration)
    files = _tighter(plan.intake.files, args.submission_files, declared)
    return Organizer(limits, Bounds(_tighter(plan.intake.size_mb, args.submission_mb, declared),
                                    files),
                     BuildBounds(_tighter(plan.build.disk_mb, args.build_disk_mb, declared),
                                 _tighter(plan.build.timeout, args.build_timeout, declared),
                                 files), plan.runtime)


def _prepare(args: argparse.Namespace) -> Prepared | str:
    """The submission copied into OUT and its manifest read; or what is wrong (exit 2)."""
    org = _bounds(args)
    if isinstance(org, str):
        return org
    if args.games < 1:
        return "--games must be at least 1"
    if args.max_refusals < 0:
        return "--max-refusals: 0 or more"
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and (not out.is_dir() or any(out.iterdir())):
        return f"--out {out}: exists and is not an empty folder"
    near = out.resolve().parent if out is not None else Path.cwd()
    near.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".chinchon-intake-", dir=near))
    try:
        taken = _take(Path(args.folder), staging / "submission", org.intake)
        if isinstance(taken, str):
            return taken
        out = out or Path(f"check-{taken.name}")
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            return f"--out {out}: exists and is not an empty folder"
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(out, 0o700)
        os.rename(staging / "submission", out / "submission")
        return Prepared(taken, org.limits, org.limits.within(taken.limits or {}), org.build,
                        org.runtime, out)
    except LimitError as e:
        return str(e)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _take(source: Path, into: Path, bounds: Bounds) -> Manifest | str:
    try:
        take(source, into, bounds)
        return Manifest.read(into)
    except (IntakeError, ManifestError) as e:
        return f"{source}: {e}" if isinstance(e, IntakeError) else str(e)
    except OSError as e:
        return f"{source}: cannot be copied: {e.strerror or e}"


async def _built(confinement: Confinement, prep: Prepared) -> str | None:
    """``OUT/bot``: the submission built (or, without a build, as it came); None, or
    why not."""
    source, folder, m = prep.out / "submission", prep.out / "bot", prep.manifest
    if not m.build:
        os.rename(source, folder)
        return None
    console.print(f"building {m.name} in its sandbox (no network, {prep.build.disk_mb} MiB): "
                  f"{' '.join(m.build)}")
    try:
        return await build(confinement, source, folder, m.build, prep.limits, prep.build,
                           prep.build.timeout_for(m.build_timeout), prep.out / BUILD_LOG,
                           python_runtime() + prep.runtime, m.name)
    finally:
        remove(source)


async def check(args: argparse.Namespace, confinement: Confinement, prep: Prepared) -> int:
    failed = await _built(confinement, prep)
    if failed is not None:
        console.print(Text(f"FAIL: {failed}"))
        return 1
    folder = prep.out / "bot"
    try:  # what runs is what the build left: its manifest is read now, once
        manifest = Manifest.read(folder)
        limits = prep.organizer.within(manifest.limits or {})
    except (ManifestError, LimitError) as e:
        console.print(Text(f"FAIL: the built submission's manifest: {e}"))
        return 1
    pinned = Record.of(folder, passed=False)
    pinned.write(folder)
    seed = args.seed or secrets.token_hex(8)
    # Played as a tournament plays it (``submission = "OUT/bot"``): its command, its folder.
    rep = await run_practice(list(python_command(manifest.run)), args.games, args.opponent,
                             RuleSet(), TimeControl(args.per_move, args.bank), seed,
                             manifest.name, out=prep.out,
                             confine=sandboxed(confinement, folder, limits, manifest.name,
                                               prep.runtime),
                             max_refusals=args.max_refusals)
    print_report(rep)
    if args.json:
        Path(args.json).write_text(json.dumps(rep.to_json(), indent=2), encoding="utf-8")
    if rep.clean:
        Record(True, pinned.sha256, pinned.entries).write(folder)
    return 0 if rep.clean else 1


def cmd_check(args: argparse.Namespace) -> int:
    try:
        confinement = Confinement.find()
    except SandboxUnavailable as e:
        console.print(Text(f"error: a submission is checked in the sandbox, and none can be "
                           f"made here: {e}"))
        return 2
    try:
        prepared = _prepare(args)
        if isinstance(prepared, str):
            console.print(Text(f"error: {prepared}"))
            return 2
        if confinement.warning:
            console.print(Text(f"warning: {confinement.warning}"))
        configure(args.log_level, "text")
        use_loop("auto")
        return asyncio.run(check(args, confinement, prepared))
    except OSError as e:
        console.print(Text(f"error: cannot start the bot: {e.strerror or e}"))
        return 2
    finally:
        confinement.close()
