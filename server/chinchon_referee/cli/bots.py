"""``chinchon bots check DIR``: a submitted bot checked the way a tournament runs it.

A submission is a folder with a manifest, ``bot.toml`` (:mod:`..launch.manifest`: its
name, runtime, build and run commands). The check:

1. reads the manifest (exit 2 naming the key that is wrong);
2. copies the folder to ``OUT/bot`` (``--out``, default ``check-NAME/``: new or empty),
   so the submission itself is never written;
3. builds it there, if the manifest says how, inside the sandbox with the same limits
   as the tournament's and no network, its output in ``OUT/build.log`` (exit 1 on a
   failed or timed-out build, with the log's end);
4. plays the practice conformance games (``chinchon practice``'s) with it sandboxed in
   ``OUT/bot``, read-only, reaching the referee through its Unix socket only; the
   report as ``chinchon practice`` prints it (exit 0 PASS, 1 FAIL).

``OUT/bot`` is then the built submission: ``tournament run`` plays it
(``submission = "OUT/bot"`` in a participant: docs/security.md).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet
from chinchon.strategies import BUILTIN_BOTS
from rich.text import Text

from ..config import TimeControl
from ..launch.bots import Keep, Sandboxed, start_confined
from ..launch.confine import Confinement
from ..launch.limits import LimitError, Limits
from ..launch.manifest import Manifest, ManifestError
from ..launch.sandbox import SandboxSpec, SandboxUnavailable, python_runtime
from ..logs import configure
from ..service.server import use_loop
from .practice import console, print_report, run_practice

BUILD_LOG = "build.log"


def register(sub: Any) -> None:
    p = sub.add_parser("bots", help="submitted bots: check one (build it and play it, sandboxed)")
    bsub = p.add_subparsers(dest="bcommand", required=True, metavar="ACTION")
    c = bsub.add_parser("check", help="build a submission (a folder with bot.toml) in the "
                        "sandbox and play the practice conformance games with it",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("folder", help="the submission: a folder with bot.toml")
    c.add_argument("--out", metavar="DIR", help="where its copy is built and the reports go "
                   "(default check-NAME/; new or empty)")
    c.add_argument("--games", type=int, default=4, help="practice games (default 4)")
    c.add_argument("--opponent", default="greedy", choices=sorted(BUILTIN_BOTS))
    c.add_argument("--seed", help="seed of the deals (default: random, printed)")
    c.add_argument("--per-move", type=float, default=2.0)
    c.add_argument("--bank", type=float, default=30.0)
    c.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="a sandbox limit, e.g. memory_mb=256 (launch/limits.py; repeatable)")
    c.add_argument("--log-level", default="warning")
    c.set_defaults(func=cmd_check)


def _prepare(args: argparse.Namespace) -> tuple[Manifest, Limits, Path] | str:
    """The manifest, the limits and the copy's folder; or what is wrong (exit 2)."""
    source = Path(args.folder)
    if not source.is_dir():
        return f"{source}: not a folder"
    try:
        manifest = Manifest.read(source)
        limits = Limits.from_pairs(args.limit)
        limits = limits.within(manifest.limits or {})
    except (ManifestError, LimitError) as e:
        return str(e)
    if args.games < 1:
        return "--games must be at least 1"
    out = Path(args.out or f"check-{manifest.name}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return f"--out {out}: exists and is not an empty folder"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, out / "bot", symlinks=True)
    return manifest, limits, out


def _command(argv: tuple[str, ...]) -> list[str]:
    return [sys.executable if part == "{python}" else part for part in argv]


async def build(confinement: Confinement, manifest: Manifest, limits: Limits,
                out: Path) -> str | None:
    """Run the manifest's build in ``out/bot`` (writable), sandboxed, no network: None
    when it succeeded, else why (its log's end included)."""
    folder = out / "bot"
    spec = SandboxSpec(folder, None, limits, python_runtime(), writable=folder)
    log = out / BUILD_LOG
    # Its stderr with its stdout, in one log.
    merged = ["/bin/sh", "-c", 'exec "$@" 2>&1', "build", *_command(manifest.build)]
    proc = await start_confined(merged,
                                Sandboxed(confinement, spec, f"{manifest.name}-build"),
                                stdout=log, stderr=Keep.DISCARD)
    try:
        code = await proc.wait(manifest.build_timeout)
    except TimeoutError:
        await proc.kill()
        return f"the build did not finish within {manifest.build_timeout:g} s (build_timeout)"
    if code == 0:
        return None
    tail = log.read_bytes()[-2000:].decode(errors="replace")
    return f"the build failed (exit code {code}); the end of {log}:\n{tail}"


async def check(args: argparse.Namespace, confinement: Confinement, manifest: Manifest,
                limits: Limits, out: Path) -> int:
    if manifest.build:
        console.print(f"building {manifest.name} in its sandbox (no network): "
                      f"{' '.join(manifest.build)}")
        failed = await build(confinement, manifest, limits, out)
        if failed is not None:
            console.print(Text(f"FAIL: {failed}"))
            return 1
    folder = out / "bot"

    def confine(sock: Path) -> Sandboxed:
        return Sandboxed(confinement, SandboxSpec(folder, sock, limits, python_runtime()),
                         manifest.name)

    seed = args.seed or secrets.token_hex(8)
    rep = await run_practice(_command(manifest.run), args.games, args.opponent, RuleSet(),
                             TimeControl(args.per_move, args.bank), seed, manifest.name,
                             out=out, confine=confine)
    print_report(rep)
    return 0 if rep.clean else 1


def cmd_check(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, str):
        console.print(Text(f"error: {prepared}"))
        return 2
    try:
        confinement = Confinement.find()
    except SandboxUnavailable as e:
        console.print(Text(f"error: a submission is checked in the sandbox, and none can be "
                           f"made here: {e}"))
        return 2
    if confinement.warning:
        console.print(Text(f"warning: {confinement.warning}"))
    configure(args.log_level, "text")
    use_loop("auto")
    try:
        return asyncio.run(check(args, confinement, *prepared))
    except OSError as e:
        console.print(Text(f"error: cannot start the bot: {e.strerror or e}"))
        return 2
    finally:
        confinement.close()
