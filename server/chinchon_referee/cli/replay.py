"""``chinchon replay RECORD``: a game record checked, and what its bots saw and did.

    chinchon replay GAME.json                  the hands' table; the problems counted
    chinchon replay GAME.json -v               every hand in full, and every refused
                                               answer, timeout and default at its step
    chinchon replay GAME.json --step N [--seat S]
                                               the observation and legal actions the
                                               bot deciding step N received, as JSON
    chinchon replay GAME.json --view           the same in the web replay viewer

Steps are numbered as the web replay numbers them (:mod:`chinchon.engine.steps`: step 1
is the first deal; ``/api/g/GAME/step/N`` is the same step N). Each line about a
decision names its step, and the game, hand, turn, phase, request and attempt as the
Python SDK's log writes them, so a line of a bot's log leads to its step.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chinchon.engine import GameState, RecordError, describe_hand_result, new_game, replay
from chinchon.engine.record import SeatIncidentKind, action_from_json, rules_from_json
from chinchon.engine.steps import incident_step, index_of_step
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .record_files import load_record

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def register(p: argparse.ArgumentParser) -> None:
    """``chinchon replay``'s options."""
    p.add_argument("record", help="a game record file: JSON, or gzipped JSON (.json.gz)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every hand in full, and every refused answer, timeout and "
                        "default at its step")
    p.add_argument("--step", type=int, metavar="N",
                   help="print, as JSON, what the bot deciding step N received: its "
                        "observation and legal actions (the web replay's step N)")
    p.add_argument("--seat", type=int, metavar="S",
                   help="with --step: the seat that should have decided it (refused, "
                        "naming that seat's nearest decisions, if it did not)")
    p.add_argument("--view", action="store_true",
                   help="open the record in the web replay viewer (served here until Ctrl-C)")
    p.add_argument("--http", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="with --view: where to serve it (default: a free local port)")
    p.add_argument("--no-browser", action="store_true",
                   help="with --view: print the URL only, do not open a browser")
    p.set_defaults(func=cmd_replay)


def _fail(message: str, code: int) -> int:
    err_console.print(Text(f"error: {message}"))
    return code


@dataclass(frozen=True)
class Moment:
    """Where a decision was asked, as a bot's log names it."""

    hand: int
    turn: int
    phase: str

    @classmethod
    def before(cls, state: GameState) -> Moment:
        return cls(state.hand_no, state.turn, state.phase.name.lower())


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        record = load_record(args.record)
    except RecordError as e:
        return _fail(str(e), 2)
    if args.seat is not None and args.step is None:
        return _fail("--seat goes with --step N (the step to show)", 2)
    if args.step is not None:
        return _print_step(record, args.step, args.seat, args.record)
    moments: list[Moment] = []
    try:
        first = new_game(rules_from_json(record.get("rules", {})))
        moments.append(Moment.before(first))
        rep = replay(record, lambda st, _i: moments.append(Moment.before(st)))
    except (RecordError, ValueError) as e:
        return _fail(f"{args.record}: {e}", 1)
    if args.view:
        from ..web.record_view import view_record

        return view_record(record, Path(args.record), args.http, not args.no_browser)
    notes = _incidents(record)
    _print_hands(args.record, rep, notes)
    if args.verbose:
        for hr in rep.state.results:
            console.print(describe_hand_result(hr, rep.names))
        _print_incidents(record, notes, moments, rep.names)
    elif notes:
        console.print(Text(f"{_counted(notes)}: chinchon replay {args.record} -v lists each "
                           "at its step"))
    summary = escape(rep.outcome.summary)
    if rep.state.result is not None:
        winners = ", ".join(rep.names[s] for s in rep.state.result.winners)
        console.print(f"winner: [bold]{escape(winners)}[/]  ({summary})")
    else:
        console.print(f"not played to the end: {rep.outcome.termination.value} ({summary})")
    return 0


def _incidents(record: dict[str, Any]) -> list[dict[str, Any]]:
    notes = record.get("incidents", [])
    return [n for n in notes if isinstance(n, dict)] if isinstance(notes, list) else []


def _counted(notes: list[dict[str, Any]]) -> str:
    """``6 answers refused, 1 timeout, 1 default (strike)``."""
    kinds = [str(n.get("kind", "")) for n in notes]
    refused = sum(k in (SeatIncidentKind.ILLEGAL, SeatIncidentKind.MALFORMED) for k in kinds)
    timeouts = kinds.count(SeatIncidentKind.TIMEOUT)
    defaults = kinds.count(SeatIncidentKind.DEFAULT)
    parts = [f"{refused} answer{'s' * (refused != 1)} refused"]
    if timeouts:
        parts.append(f"{timeouts} timeout{'s' * (timeouts != 1)}")
    if defaults:
        parts.append(f"{defaults} default{'s' * (defaults != 1)} played (strikes)")
    return ", ".join(parts)


def _print_hands(path: str, rep: Any, notes: list[dict[str, Any]]) -> None:
    names = rep.names
    title = f"{path}: {rep.actions} actions replayed, all legal"
    if notes:
        title += f" ({_counted(notes)} on the way)"
    table = Table(title=escape(title))
    table.add_column("hand", justify="right")
    table.add_column("ended")
    for n in names:
        table.add_column(escape(n), justify="right")
    for hr in rep.state.results:
        how = hr.end.name.lower().replace("_", " ")
        if hr.closer >= 0:
            how += f" by {names[hr.closer]}" + (f" ({hr.bonus})" if hr.bonus != "none" else "")
        table.add_row(
            str(hr.hand_no), escape(how),
            *[f"{hr.points[s]:+d} = {hr.totals[s]}" if hr.hands[s] else "-" for s in range(len(names))],
        )
    console.print(table)


def where(record: dict[str, Any], note: dict[str, Any], moments: list[Moment]) -> str:
    """``step 6: game G, hand 1, turn 2 (draw), request 3, attempt 0``: the SDK log's
    words for the decision ``note`` was about."""
    step = incident_step(note)
    index = index_of_step(step)
    m = moments[index] if 0 <= index < len(moments) else None
    text = f"step {step}: game {record.get('gameId', '')}"
    if m is not None:
        text += f", hand {m.hand}, turn {m.turn} ({m.phase})"
    text += f", request {note.get('requestId', '?')}"
    if "attempt" in note or note.get("kind") in (SeatIncidentKind.ILLEGAL,
                                                   SeatIncidentKind.MALFORMED):
        text += f", attempt {note.get('attempt', 0)}"
    return text


def what(record: dict[str, Any], note: dict[str, Any]) -> str:
    """What happened, in words: the answer refused and why, the wait, the default."""
    kind = note.get("kind")
    message = str(note.get("message", ""))
    if kind in (SeatIncidentKind.ILLEGAL, SeatIncidentKind.MALFORMED):
        why = f"{note['violation']}: {message}" if note.get("violation") else message
        label = "illegal" if kind == SeatIncidentKind.ILLEGAL else "malformed"
        return f"refused ({label}): sent {note.get('sent', '')!s} -> {why}"
    if kind == SeatIncidentKind.TIMEOUT:
        return f"timeout: waited {note.get('waited', '?')}, {message}"
    if kind == SeatIncidentKind.DEFAULT:
        actions = record.get("actions", [])
        index = index_of_step(incident_step(note))
        move = actions[index].get("move", {}) if 0 <= index < len(actions) else {}
        played = str(action_from_json(move["action"])) if "action" in move else "?"
        return (f"default played: {played} (strike {note.get('strikes', '?')} of "
                f"{note.get('maxStrikes', '?')})")
    return f"{kind}: {message}"


def _print_incidents(record: dict[str, Any], notes: list[dict[str, Any]],
                     moments: list[Moment], names: list[str]) -> None:
    if not notes:
        console.print("no answer refused, no timeout, no default")
        return
    console.print(f"\n[bold]{_counted(notes)}[/] (steps as in the web replay; "
                  "chinchon replay FILE --step N prints what the bot received there):")
    for note in sorted(notes, key=incident_step):
        seat = note.get("seat", 0)
        who = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else "?"
        # The bot's own answers and the referee's words: text, never rich markup.
        console.print(Text(f"  {where(record, note, moments)}, seat {seat} {who}: "
                           f"{what(record, note)}"))


def _print_step(record: dict[str, Any], step: int, seat: int | None, path: str) -> int:
    """``--step N [--seat S]``: the request of step N as JSON on stdout (exit 0); a step
    that is no decision (of S) refused naming the nearest that are (exit 2)."""
    from ..web.replay import ViewError
    from ..web.step_view import step_request

    if step < 1:
        return _fail(f"--step {step}: steps are numbered from 1 (step 1 is the first deal)", 2)
    try:
        sent = step_request(record, step, seat)
    except ViewError as e:
        return _fail(f"{path}: {e}", 2)
    except (RecordError, ValueError) as e:
        return _fail(f"{path}: {e}", 1)
    obs = sent["observation"]
    notes = sent.get("incidents", [])
    rid = next((n.get("requestId") for n in notes if n.get("requestId")), None)
    err_console.print(Text(
        f"step {step}: game {sent['game_id']}, hand {obs.get('handNumber', 0)}, turn "
        f"{obs.get('turn', 0)}, seat {sent['seat']} {sent['name']}"
        + (f", request {rid}" if rid else "")
        + f"; {len(sent['legalActions'])} legal actions; answered "
        f"{sent['origin'].removeprefix('ACTION_ORIGIN_').lower()}"))
    print(json.dumps(sent, indent=2, ensure_ascii=False))
    return 0
