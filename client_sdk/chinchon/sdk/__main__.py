"""``python -m chinchon.sdk``: run a Python bot against a referee.

    export CHINCHON_TOKEN=$(cat my.token)     # the token: never on the command line
    python -m chinchon.sdk --target HOST:PORT --bot path/to/bot.py[:NAME]
    python -m chinchon.sdk --target HOST:PORT --bot greedy --practice strong --games 10
    python -m chinchon.sdk --target HOST1:PORT,HOST2:PORT --bot path/to/bot.py

TLS: ``--root-cert ca.pem`` trusts the organizer's CA (or the referee's self-signed
certificate); ``--tls`` trusts the system's CAs (a certificate of a public CA).

Several addresses, comma-separated: referee processes sharing one database; the bot
holds one stream on each, reconnects to each on its own, and exits once every stream
has ended (0 if one at least was dismissed or ended normally; 1 on a refused token at
any address, or if none could be reached). Practice takes one address.

``--bot`` names a file and a name in it (default: ``Bot``, else ``choose``), a module path
(``package.module:NAME``), or a built-in bot (:mod:`chinchon.strategies.builtin`):
``random``, ``greedy``, ``strong``. NAME is a
class (instantiated without arguments), a function ``choose(obs, legal[, request])``, an
object with such a ``choose`` method, or a function of no arguments that returns a bot.
CHINCHON_TARGET and CHINCHON_TOKEN may replace the flags; prefer CHINCHON_TOKEN to
``--token``: a command line is visible to every user of the machine (``ps``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import logging
import os
import sys
from pathlib import Path
from typing import Any

from .client import FatalError, PracticeOptions, SessionReport, as_chooser
from .targets import parse_targets, run_bot


def load_bot(spec: str) -> Any:
    """The bot ``spec`` names (see the module's docstring), checked: SystemExit with a
    message when it is not one."""
    from chinchon.strategies import BUILTIN_BOTS, make_bot

    if spec in BUILTIN_BOTS:
        return make_bot(spec)
    path, _, name = spec.partition(":")
    if path.endswith(".py"):
        file = Path(path)
        if not file.exists():
            raise SystemExit(f"error: bot file {path} does not exist")
        mod_spec = importlib.util.spec_from_file_location(file.stem, file)
        assert mod_spec is not None and mod_spec.loader is not None
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[file.stem] = module
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(path)
    if not name:
        name = "Bot" if hasattr(module, "Bot") or not hasattr(module, "choose") else "choose"
    found = getattr(module, name, None)
    if found is None:
        raise SystemExit(f"error: {path} has no '{name}'")
    if isinstance(found, type) or (not hasattr(found, "choose") and _is_factory(found)):
        found = found()
    try:
        as_chooser(found)
    except TypeError as e:
        raise SystemExit(f"error: {path}:{name} is not a bot: {e}") from None
    return found


def _is_factory(obj: Any) -> bool:
    """A callable that takes no arguments (it makes the bot), as opposed to a
    ``choose(obs, legal)`` function."""
    if not callable(obj):
        return False
    try:
        inspect.signature(obj).bind()
    except (TypeError, ValueError):  # needs arguments, or has no signature to read
        return False
    return True


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m chinchon.sdk", description=__doc__.splitlines()[0])
    ap.add_argument("--target", default=os.environ.get("CHINCHON_TARGET"), metavar="HOST:PORT[,HOST:PORT...]",
                    help="the referee's address (unix:PATH: a Unix socket, what a sandboxed bot "
                         "dials); several, comma-separated: one stream on each "
                         "referee process (default $CHINCHON_TARGET)")
    ap.add_argument("--token", default=os.environ.get("CHINCHON_TOKEN"),
                    help="the bot's token (default $CHINCHON_TOKEN, which other local users "
                    "cannot see in ps)")
    ap.add_argument("--bot", default="greedy",
                    help="file.py[:NAME], module:NAME (a class, a choose function...), or an engine bot")
    ap.add_argument("--practice", metavar="OPPONENT", help="play practice games against a house bot or 'any'")
    ap.add_argument("--games", type=int, default=1, help="practice games (default 1)")
    ap.add_argument("--wait", type=float, metavar="SECONDS",
                    help="with --practice any: how long to wait for another bot "
                         "(default: the referee's, 2 minutes)")
    ap.add_argument("--root-cert", metavar="FILE",
                    help="connect with TLS, trusting the certificates of this PEM file (the "
                         "organizer's CA or the referee's self-signed certificate)")
    ap.add_argument("--tls", action="store_true",
                    help="connect with TLS, trusting the system's CAs (a referee whose "
                         "certificate a public CA signed); --root-cert: trust a PEM file instead")
    ap.add_argument("--reconnect-for", type=float, default=60.0, metavar="SECONDS",
                    help="keep trying to reach the referee this long after losing it, on a "
                         "fresh channel each time, each address on its own (default 60: "
                         "longer than a restarted referee takes to come back and wait 30 s "
                         "for its bots)")
    ap.add_argument("--full-observations", action="store_true",
                    help="ask for the whole observation in every request (as bots of other "
                         "languages get it) instead of lean requests the SDK rebuilds it "
                         "from: the bot sees the same either way (docs/protocol.md)")
    ap.add_argument("-v", "--verbose", action="store_true")
    return ap


def _print_report(report: SessionReport) -> None:
    """The run's totals, then how each referee's stream ended, on stderr."""
    print(f"{report.games} games, {report.wins} won, {report.decisions} decisions "
          f"({report.mean_think_ms:.1f} ms each on the referee's clock), "
          f"{len(report.rejected)} refused, {len(report.defaults)} defaults", file=sys.stderr)
    if not report.by_target and report.dismissed is not None:
        print(f"dismissed by the referee: {report.dismissed.message}", file=sys.stderr)
    for target, part in report.by_target.items():
        how = (f"dismissed by the referee: {part.dismissed.message}" if part.dismissed is not None
               else "unreachable, gave up" if part.unreachable else "the referee ended the stream")
        print(f"{target}: {part.games} games, {part.wins} won; {how}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if not args.target or not args.token:
        ap.error("--target and --token are required (or CHINCHON_TARGET / CHINCHON_TOKEN)")
    try:
        targets = parse_targets(args.target)
    except ValueError as e:
        ap.error(f"--target: {e}")
    if args.practice and len(targets) > 1:
        ap.error(f"--practice plays on one referee: give one --target address, not {len(targets)}")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    bot = load_bot(args.bot)
    practice = (PracticeOptions(opponent=args.practice, games=args.games, wait=args.wait)
                if args.practice else None)
    try:
        root = Path(args.root_cert).read_bytes() if args.root_cert else None
    except OSError as e:
        ap.error(f"--root-cert: cannot read {args.root_cert}: {e.strerror}")
    try:
        report = run_bot(bot, targets, args.token, practice=practice, root_cert=root, tls=args.tls,
                         reconnect_for=args.reconnect_for, lean=not args.full_observations)
    except FatalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    _print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
