"""The ``chinchon`` command.

    chinchon demo                       play a game between two engine bots, hand by hand
    chinchon replay RECORD.json         verify a game record and print its hands
    chinchon replay RECORD.json -v      ... and every refused answer, timeout, default
    chinchon replay RECORD.json --step N   what the bot deciding step N received (JSON)
    chinchon replay RECORD.json --view  verify it, then watch it in the web replay viewer
    chinchon rules [FILE] [--check]     print (or validate) a rule set
    chinchon serve ...                  run the referee server
    chinchon web --feed PATH --db DB    its web view, run apart (serve --http runs it itself)
    chinchon practice BOT-COMMAND...    conformance run of a bot against a house bot
    chinchon tournament run FILE        run a round-robin tournament end to end
    chinchon match --candidate CMD --baseline CMD   head-to-head: Elo interval, SPRT
    chinchon admin COMMAND ...          manage a running referee (tournaments, results, bots)

Exit codes: 0 success, 1 the thing checked is bad (illegal record, invalid rule
set, failed bot), 2 usage errors and unreadable files.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

# Before gRPC is first imported (by the subcommands below): the CLI never forks a child
# that uses gRPC (bots are started with exec), so gRPC's fork handlers have nothing to
# protect, and with uvloop's process spawning they would log a line per bot launched.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from chinchon.engine import RuleSet

#: The subcommands that have modules of their own (name -> module of this package). Each
#: is imported only to run it (or for the full ``--help``): ``chinchon admin`` never
#: loads the server, the director or the web view (tests/cli/test_cli_imports.py).
SUBCOMMANDS = {"serve": "serve", "web": "web", "practice": "practice",
               "tournament": "tournament", "admin": "admin", "db": "db", "bots": "bots",
               "match": "match"}

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

Handler = Callable[[argparse.Namespace], int]


def _fail(message: str, code: int = 1) -> int:
    err_console.print(f"[bold red]error:[/] {message}")
    return code


def _load_rules(path: str | None) -> RuleSet:
    from chinchon.engine import RuleSet

    return RuleSet.from_file(path) if path else RuleSet()


# -- demo --------------------------------------------------------------------------------

def cmd_demo(args: argparse.Namespace) -> int:
    from chinchon.engine import RuleSetError, describe_hand_result, play_game
    from chinchon.engine.outcome import summarize
    from chinchon.engine.record import dumps
    from chinchon.strategies import BUILTIN_BOTS

    try:
        rules = _load_rules(args.rules)
        if rules.players != len(args.bots):
            rules = rules.replace(players=len(args.bots))
    except (RuleSetError, OSError) as e:
        return _fail(str(e), 2)
    for b in args.bots:
        if b not in BUILTIN_BOTS:
            return _fail(f"unknown engine bot '{b}': choose from {', '.join(BUILTIN_BOTS)}", 2)
    bots = [BUILTIN_BOTS[b](i) for i, b in enumerate(args.bots)]
    names = [f"{b}-{i}" for i, b in enumerate(args.bots)]
    state, record = play_game(rules, bots, args.seed, "demo", names)
    console.print(f"[bold]Chinchón demo[/]: {' vs '.join(names)}, seed '{args.seed}'\n")
    for hr in state.results:
        console.print(describe_hand_result(hr, names))
    res = state.result
    assert res is not None
    console.print(f"\n[bold green]{escape(summarize(res, names))}[/]")
    if args.record:
        with open(args.record, "w", encoding="utf-8") as fh:
            fh.write(dumps(record))
        console.print(f"record written to {args.record} (check it: chinchon replay {args.record})")
    return 0


# -- replay: cli/replay.py --------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import cmd_replay as run

    return run(args)


# -- rules -------------------------------------------------------------------------------


def cmd_rules(args: argparse.Namespace) -> int:
    from chinchon.engine import OPTIONS, RuleSetError

    path = args.check or args.file
    try:
        rules = _load_rules(path)
    except RuleSetError as e:
        return _fail(f"{path}: {e}", 1)
    except OSError as e:
        return _fail(f"cannot read {path}: {e.strerror}", 2)
    if args.check:
        (err_console if args.json else console).print(f"{args.check}: valid rule set")
    if args.json:
        print(json.dumps(rules.to_dict(), indent=2))
        return 0
    table = Table(title="rule set in force" + (f" ({path})" if path else " (defaults)"))
    table.add_column("option")
    table.add_column("value", justify="right")
    table.add_column("default", justify="right")
    table.add_column("meaning")
    values = rules.to_dict()
    for opt in OPTIONS:
        table.add_row(opt.name, _shown(values[opt.name]), _shown(opt.default), opt.help)
    console.print(table)
    return 0


def _shown(v: object) -> str:
    """An option's value as the table shows it: true/false, a list of cards as text."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return " ".join(map(str, v)) or "none"
    return str(v)


# -- wiring ------------------------------------------------------------------------------


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; ``only``: of the subcommands with modules of their own
    (:data:`SUBCOMMANDS`), import and register that one alone (the one to run)."""
    ap = argparse.ArgumentParser(
        prog="chinchon",
        description="Chinchón referee: rules engine, gRPC server, tournaments.",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="play a full game between two engine bots, hand by hand")
    p.add_argument("--seed", default="demo", help="seed of the deals (default: demo)")
    p.add_argument("--rules", help="rule set file (TOML or JSON)")
    p.add_argument(
        "--bots", nargs="+", default=["greedy", "random"], help="engine bots by seat"
    )
    p.add_argument("--record", help="write the game record (JSON) here")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("replay", help="verify a game record; its hands, refused answers "
                       "and what a bot received at a step")
    from .replay import register as register_replay

    register_replay(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("rules", help="print the rule set in force, or validate a file")
    p.add_argument("file", nargs="?", help="rule set file (TOML or JSON); default: defaults")
    p.add_argument("--check", metavar="FILE", help="validate FILE and exit 1 if it is invalid")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=cmd_rules)

    for name, module in SUBCOMMANDS.items():
        if only is None or only == name:
            importlib.import_module(f".{module}", __package__).register(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv else None
    only = first if first in SUBCOMMANDS else None
    args = build_parser(only).parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


if __name__ == "__main__":
    sys.exit(main())
