"""``chinchon practice -- BOT-COMMAND...``: the conformance check a bot author runs.

Starts a private referee on a free local port, launches the bot from its command line
(appending ``--target HOST:PORT``; the address is in the environment as
CHINCHON_TARGET too, and the token only there, as CHINCHON_TOKEN: a command line is
visible to every local user), plays games against a house bot (seats alternate, every
game its own deal), and reports the results and every problem: illegal actions with
their reasons, timeouts with the time taken, protocol errors, forfeits. Exit code 0
when the bot played every game cleanly, 1 otherwise, 2 on usage errors. The deals come
from ``--seed`` (the bot is never told it): without it, a random seed, printed with the
report, so ``--seed`` repeats the run exactly.

Everything the run leaves for the author goes in one folder, ``--out DIR`` (default
``practice-SEED/`` in the current directory, created; an existing folder is refused
unless it is empty): the bot's whole stderr in ``bot-stderr.log`` (each game's lines
also in ``practice-N.stderr.log``) and each game's
record in ``practice-N.json`` (``chinchon replay practice-N.json`` checks and prints
it). The report prints where they are, on PASS and on FAIL.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import re
import secrets
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet, RuleSetError, Termination
from chinchon.engine.steps import incident_step
from chinchon.strategies import BUILTIN_BOTS
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..auth import TokenBook, new_token
from ..config import Policies, RefereeConfig, TimeControl
from ..launch.bots import BotProcess
from ..launch.confine import Confinement
from ..launch.game_logs import GameLogs
from ..launch.launcher import (
    Confine,
    DeclaredBot,
    Launcher,
    Output,
    Quiet,
    sandboxed,
)
from ..launch.limits import LimitError, Limits
from ..launch.sandbox import SandboxUnavailable
from ..logs import configure
from ..referee import GameOutcome, GameSpec, Incident, IncidentKind, Referee
from ..referee.dismissal import Dismissal, DismissReason
from ..service.server import start_server, use_loop

console = Console(highlight=False, soft_wrap=True)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "practice",
        help="conformance run: launch a bot command against a local referee and house bot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    p.add_argument("--opponent", default="greedy", choices=sorted(BUILTIN_BOTS),
                   help="house bot to play (default greedy)")
    p.add_argument("--rules", help="rule set file (TOML or JSON)")
    p.add_argument("--per-move", type=float, default=TimeControl.per_move,
                   help="seconds per decision")
    p.add_argument("--bank", type=float, default=TimeControl.bank, help="time bank per game")
    p.add_argument("--seed", default="",
                   help="seed of the deals (default: random, printed to repeat the run)")
    p.add_argument("--name", help="the bot's name in the games and the report (default: the "
                   "name in the bot's bot.toml, beside its program or in --sandbox FOLDER; "
                   "else its program's name)")
    p.add_argument("--sandbox", metavar="FOLDER",
                   help="run the bot sandboxed in FOLDER (read-only; no network: it dials "
                   "the referee's Unix socket; docs/security.md)")
    p.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="with --sandbox: a limit, e.g. memory_mb=256 (repeatable)")
    p.add_argument("--connect-timeout", type=float, default=30.0,
                   help="seconds the bot has to connect (default 30)")
    add_strictness(p, 0)
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    p.add_argument("--out", metavar="DIR",
                   help="folder for the bot's stderr (bot-stderr.log) and each game's "
                        "record (practice-N.json, for chinchon replay); default: "
                        "practice-SEED/ in the current directory")
    p.add_argument("--log-level", default="warning")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the bot's command line")
    p.set_defaults(func=cmd_practice)


#: Lines of the bot's stderr shown in the report (the last ones; the file has them all).
STDERR_LINES = 15
#: Bytes read back from the end of the stderr file for the report.
STDERR_TAIL_BYTES = 64 * 1024
STDERR_FILE = "bot-stderr.log"


def exit_description(code: int) -> str:
    """``exit code 3``, or ``killed by signal SIGKILL`` for a negative return code."""
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - STDERR_TAIL_BYTES))
            data = fh.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


@dataclass
class PracticeReport:
    bot: str
    opponent: str
    outcomes: list[GameOutcome] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)
    connected: bool = False
    bot_exit: int | None = None
    #: After its games the bot is dismissed (``PlayResponse.dismissed``): whether it then
    #: exited by itself (True), or had to be stopped with SIGTERM (False); None when it
    #: was not dismissed (it never connected).
    exited_by_itself: bool | None = None
    bot_stderr: str = ""
    seed: str = ""
    out: Path | None = None
    records: list[Path] = field(default_factory=list)
    #: How strict the verdict is: refused answers (illegal or malformed) that may pass;
    #: 0, any fails. Every other problem fails whatever this says.
    max_refusals: int = 0

    @property
    def refusals(self) -> int:
        return sum(1 for i in self.incidents if i["kind"] == IncidentKind.ILLEGAL)

    @property
    def clean(self) -> bool:
        return self._played_cleanly(excuse_referee=False)

    @property
    def referee_only_failed(self) -> bool:
        """Not clean only because the referee hit internal errors (ABORTED games)."""
        return not self.clean and self._played_cleanly(excuse_referee=True)

    def _played_cleanly(self, excuse_referee: bool) -> bool:
        """Connected, played, and no problem; with ``excuse_referee``, games the referee
        aborted by an internal error are not counted as problems."""
        excused: tuple[str, ...] = ("aborted",) if excuse_referee else ()
        if self.refusals <= self.max_refusals:
            excused += (IncidentKind.ILLEGAL,)
        return (
            self.connected
            and bool(self.outcomes)
            and all(i["kind"] in excused for i in self.incidents)
            and all(o.termination.played
                    or (excuse_referee and o.termination is Termination.ABORTED)
                    for o in self.outcomes)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "opponent": self.opponent,
            "seed": self.seed,
            "connected": self.connected,
            "games": [
                {
                    "game_id": o.spec.game_id,
                    "players": o.spec.players,
                    "termination": o.termination,
                    "winners": [o.spec.players[w] for w in o.winners],
                    "totals": list(o.result.totals),
                    "summary": o.result.summary,
                }
                for o in self.outcomes
            ],
            "incidents": self.incidents,
            "refusals": self.refusals,
            "max_refusals": self.max_refusals,
            "clean": self.clean,
            "bot_exit": self.bot_exit,
            "exited_by_itself": self.exited_by_itself,
            "bot_stderr_file": str(self.out / STDERR_FILE) if self.out else None,
            "records": [str(r) for r in self.records],
        }


async def run_practice(
    command: list[str],
    games: int,
    opponent: str,
    rules: RuleSet,
    time_control: TimeControl,
    seed: str,
    name: str = "candidate",
    connect_timeout: float = 30.0,
    out: Path | None = None,
    confine: Confine | None = None,
    max_refusals: int = 0,
) -> PracticeReport:
    """Play the games; with ``out`` (an existing folder), the bot's stderr goes to
    ``out/bot-stderr.log`` (and each game's share of it to ``out/practice-N.stderr.log``)
    and each game's record to ``out/practice-N.json``. With ``confine``
    (:func:`..launch.launcher.sandboxed`), the bot runs sandboxed around the referee's
    Unix socket, made in a private folder for the run. The bot is launched, watched and
    stopped by :class:`..launch.launcher.Launcher`, as a tournament's are."""
    token = new_token()
    tokens = TokenBook()
    tokens.add(name, token)
    config = RefereeConfig(time_control=time_control, policies=Policies(reconnect_grace=5.0))
    referee = Referee(config)
    told = Quiet()  # the report says how the bot ended, in its own words
    launcher = Launcher(Output(out, stderr=STDERR_FILE, stdout=None, tail=STDERR_LINES,
                               private=False), events=told)
    server = await start_server("127.0.0.1:0", config, tokens, referee=referee,
                                unix=launcher.open_socket() if confine else None)
    report = PracticeReport(name, opponent, seed=seed, out=out, max_refusals=max_refusals)
    stderr_file = out / STDERR_FILE if out is not None else None
    if out is not None and stderr_file is not None:
        # Each game's share of the bot's stderr beside its record: practice-N.stderr.log.
        folder = out
        referee.services.on_game = GameLogs(
            {name: [stderr_file]}, lambda gid, _seat: folder / f"{gid}.stderr.log", [token])
    await launcher.start(server.target, [DeclaredBot(name, tuple(command), token,
                                                     sandbox=confine)])
    if told.failed is not None:
        await server.stop(grace=1.0)
        launcher.close()
        raise told.failed
    proc = launcher.procs[0].proc
    try:
        exited = await _wait_connected(referee, proc, name, connect_timeout, report)
        if report.connected:
            games_of = _Games(games, opponent, rules, time_control, seed, config.policies)
            await _play_games(referee, report, games_of, exited)
        report.incidents.extend(referee.incidents)
        if report.connected:
            # Nothing more is scheduled for the bot: tell it, so that it exits by itself.
            why = Dismissal(DismissReason.GAMES_PLAYED, "",
                            "the practice games of chinchon practice are played: goodbye")
            referee.lobby.dismissal = lambda _bot: why
            referee.lobby.dismiss(name, why)
    finally:
        # A dismissed bot has 5 s to exit by itself; then (or at once) SIGTERM.
        (end,) = await launcher.stop(dismissed=report.connected)
        report.bot_exit = end.code
        report.exited_by_itself = end.by_itself if report.connected else None
        report.bot_stderr = _tail(stderr_file) if stderr_file else "".join(proc.err)
        await server.stop(grace=1.0)
        launcher.close()
    return report


@dataclass(frozen=True)
class _Games:
    """The practice games to play: how many, against which house bot, under which rules."""

    count: int
    opponent: str
    rules: RuleSet
    time_control: TimeControl
    seed: str
    policies: Policies


async def _wait_connected(referee: Referee, proc: BotProcess, name: str, connect_timeout: float,
                          report: PracticeReport) -> asyncio.Future[int]:
    """Until the bot connects, exits or runs out of time (then an incident says which);
    the bot's end as a future."""
    waiter = asyncio.ensure_future(referee.lobby.wait_all([name], connect_timeout))
    exited = asyncio.ensure_future(proc.wait())
    await asyncio.wait([waiter, exited], return_when=asyncio.FIRST_COMPLETED)
    report.connected = waiter.done() and bool(waiter.result())
    waiter.cancel()
    if not report.connected:
        report.incidents.append({
            "kind": IncidentKind.CONNECT,
            "bot": name,
            "message": f"the bot exited before connecting ({exit_description(exited.result())})"
            if exited.done() else f"the bot did not connect within {connect_timeout:g} s",
        })
    return exited


async def _play_games(referee: Referee, report: PracticeReport, games: _Games,
                      exited: asyncio.Future[int]) -> None:
    """The games one after the other, seats swapped each game; each record kept in
    ``report.out``; stopped early by a no-show or the bot's exit."""
    out = report.out
    for i in range(games.count):
        players = [report.bot, f"house:{games.opponent}"]
        if i % 2:
            players.reverse()
        spec = GameSpec(
            game_id=f"practice-{i + 1}", rules=games.rules, players=players, seed=games.seed,
            deal_id=f"deal-{i + 1}", time_control=games.time_control,
            policies=games.policies, labels={"practice": "1"},
        )
        first = len(referee.incidents)
        outcome = await referee.play(spec)
        # Games here run one at a time for one bot: what the referee noted during
        # play() (protocol errors carry no game id) happened in this game.
        for incident in referee.incidents[first:]:
            incident.setdefault("game_id", spec.game_id)
        report.outcomes.append(outcome)
        if out is not None:
            path = out / f"{spec.game_id}.json"
            path.write_text(json.dumps(outcome.record, indent=1), encoding="utf-8")
            report.records.append(path)
        if outcome.termination is Termination.FORFEIT_NO_SHOW or exited.done():
            break


def _detail(i: Incident) -> str:
    detail = str(i.get("message", ""))
    if i["kind"] == "timeout":
        detail = f"no answer in {i['waited']:.3f} s (allowed {i['allowed']:.3f} s)"
    elif i["kind"] == "illegal":
        detail = f"{i['violation'] or i['code']}: {i['message']}"
    return detail


def _steps_by_request(rep: PracticeReport) -> dict[tuple[str, str], int]:
    """(game, request id) -> the step of the game's record that request was for (the
    web replay's numbering: ``chinchon replay FILE --step N``)."""
    out = {}
    for o in rep.outcomes:
        notes = (o.record or {}).get("incidents", [])
        for note in notes if isinstance(notes, list) else []:
            if isinstance(note, dict) and "requestId" in note:
                out[(o.spec.game_id, str(note["requestId"]))] = incident_step(note)
    return out


def problems_table(rep: PracticeReport) -> Table:
    """The problems found, identical ones (same kind, game and words) on one row with
    how many there were and the steps of the first and the last."""
    steps = _steps_by_request(rep)
    rows: dict[tuple[str, str, str], list[int | None]] = {}
    for i in rep.incidents:
        game = str(i.get("game_id", "-"))
        step = steps.get((game, str(i.get("request_id", ""))))
        rows.setdefault((str(i["kind"]), game, _detail(i)), []).append(step)
    inc = Table(title="problems found")
    for col in ("kind", "game", "times", "steps"):
        inc.add_column(col)
    inc.add_column("detail", overflow="fold")
    for (kind, game, detail), at in rows.items():
        known = [s for s in at if s is not None]
        where = "-" if not known else f"{known[0]}" if len(set(known)) == 1 \
            else f"{min(known)} … {max(known)}"
        # Details quote the bot (its messages, its actions): text, never markup.
        inc.add_row(kind, game, f"{len(at)}×", where, Text(detail))
    return inc


def print_report(rep: PracticeReport) -> None:
    table = Table(title=f"practice: {rep.bot} vs house:{rep.opponent}")
    for col in ("game", "seats", "result", "totals", "how"):
        table.add_column(col)
    wins = 0
    for o in rep.outcomes:
        won = [o.spec.players[w] for w in o.winners]
        if rep.bot in won:
            wins += 1
        table.add_row(
            o.spec.game_id,
            " / ".join(o.spec.players),
            "won" if rep.bot in won else "lost" if won else "no winner",
            " / ".join(str(t) for t in o.result.totals),
            o.termination.name.lower(),
        )
    console.print(table, soft_wrap=False)  # the table fits the terminal, cells wrap
    if rep.outcomes:
        console.print(f"{rep.bot} won {wins} of {len(rep.outcomes)} games")
    if rep.incidents:
        console.print(problems_table(rep), soft_wrap=False)
        counts = Counter(i["kind"] for i in rep.incidents)
        console.print("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if rep.bot_stderr.strip() and not rep.clean:
        # The bot's own words, verbatim: never read as rich markup.
        tail = "\n".join(rep.bot_stderr.strip().splitlines()[-STDERR_LINES:])
        console.print(Text("bot stderr (last lines):\n" + tail, style="dim"))
    if rep.exited_by_itself is False:
        console.print("[dim]note: the bot did not exit within 5 s of being dismissed after its "
                      "games (PlayResponse.dismissed): it was stopped with SIGTERM[/]")
    if rep.out is not None:
        console.print(Text(f"bot stderr saved in {rep.out / STDERR_FILE}"))
        if rep.records:
            console.print(Text(f"game records ({len(rep.records)}) saved in {rep.out}/: "
                               f"chinchon replay {rep.records[0]}"))
    aborted = sum(1 for i in rep.incidents if i["kind"] == "aborted")
    if aborted:
        console.print(f"[yellow]{aborted} game(s) stopped by an internal error of the referee: "
                      "not your bot's fault. The traceback is in the referee's log "
                      "(game_crashed); please report it.[/]")
    console.print(f"strictness: {strictness(rep.max_refusals)}; {rep.refusals} refused")
    if rep.clean:
        verdict = ("[bold green]PASS[/]: every game played cleanly" if not rep.incidents
                   else f"[bold green]PASS[/]: every game played, {rep.refusals} refused "
                        f"answer(s) within --max-refusals {rep.max_refusals}")
    elif rep.referee_only_failed:
        verdict = ("[bold yellow]INCONCLUSIVE[/]: your bot played cleanly, but the referee "
                   "failed; run it again")
    else:
        verdict = "[bold red]FAIL[/]: see the problems above"
    console.print(verdict)
    console.print(f"[dim]seed {rep.seed}: --seed {rep.seed} plays the same deals again[/]")


def strictness(max_refusals: int) -> str:
    """How strict the verdict is, in words."""
    if max_refusals == 0:
        return "any refused answer fails (--max-refusals 0)"
    return (f"more than {max_refusals} refused answer(s) in all fail (--max-refusals "
            f"{max_refusals}); a timeout, a forfeit or a protocol error fails")


def add_strictness(p: argparse.ArgumentParser, default: int) -> None:
    """``--max-refusals N``: how many refused answers still pass."""
    p.add_argument("--max-refusals", type=int, default=default, metavar="N",
                   help="refused answers (illegal or malformed: the referee asks again) "
                        f"that still pass, over all games (default {default}: any one "
                        "fails); a timeout, forfeit, protocol error or crash fails always")


#: A bot's name when nothing names it.
UNNAMED = "candidate"


def bot_name(command: list[str], sandbox: str | None) -> str:
    """The bot's name when ``--name`` does not give it: the ``name`` of its manifest
    (``bot.toml`` in ``--sandbox FOLDER``, or beside the first file of its command that
    exists when the manifest runs that file, e.g. ``bot.js``); else that file's name
    without its suffix (``greedy_bot``), cut to the names a bot may have; else
    ``candidate``."""
    from ..launch.manifest import Manifest, ManifestError

    files = [Path(part) for part in command if not part.startswith("-")]
    program = next((f for f in files[1:] if f.is_file()), None) \
        or (files[0] if files and files[0].is_file() and "/" in command[0] else None)
    manifests: list[tuple[Path, str | None]] = [(Path(sandbox), None)] if sandbox else []
    if program is not None:
        manifests.append((program.parent, program.name))
    for folder, runs in manifests:
        try:
            m = Manifest.read(folder)
        except ManifestError:
            continue
        if runs is None or any(Path(part).name == runs for part in m.run):
            return m.name
    if program is not None:
        name = re.sub(r"[^A-Za-z0-9_-]", "-", program.stem)[:32].strip("-")
        if name:
            return name
    return UNNAMED


def _confine(args: argparse.Namespace) -> Confine | str | None:
    """``--sandbox FOLDER``: the bot's sandbox given the referee's socket; None without
    it; what is wrong (no sandbox here, a bad limit, no such folder)."""
    if not args.sandbox:
        return None
    folder = Path(args.sandbox)
    if not folder.is_dir():
        return f"--sandbox {folder}: not a folder"
    try:
        limits = Limits.from_pairs(args.limit)
        confinement = Confinement.find()
    except (LimitError, SandboxUnavailable) as e:
        return f"--sandbox: {e}"
    if confinement.warning:
        console.print(Text(f"warning: {confinement.warning}"))
    atexit.register(confinement.close)  # its cgroup folders, once the run is over
    return sandboxed(confinement, folder, limits, args.name)


def cmd_practice(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        console.print("error: give the bot's command, e.g. chinchon practice -- node bot.js")
        return 2
    if args.games < 1:
        console.print("error: --games must be at least 1")
        return 2
    if args.max_refusals < 0:
        console.print("error: --max-refusals: 0 or more")
        return 2
    try:
        rules = RuleSet.from_file(args.rules) if args.rules else RuleSet()
        tc = TimeControl(args.per_move, args.bank)
    except (RuleSetError, ValueError, OSError) as e:
        console.print(f"error: {e}")
        return 2
    if rules.players != 2:
        console.print("error: practice games are for 2 players")
        return 2
    configure(args.log_level, "text")
    use_loop("auto")
    seed = args.seed or secrets.token_hex(8)
    out = Path(args.out) if args.out else Path(f"practice-{seed}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        if any(out.iterdir()):
            console.print(Text(f"error: --out {out}: the folder is not empty "
                               "(give another one, or empty it)"))
            return 2
    except OSError as e:
        console.print(Text(f"error: --out {out}: {e.strerror or e}"))
        return 2
    args.name = args.name or bot_name(command, args.sandbox)
    confine = _confine(args)
    if isinstance(confine, str):
        console.print(Text(f"error: {confine}"))
        return 2
    try:
        rep = asyncio.run(run_practice(command, args.games, args.opponent, rules, tc, seed,
                                       args.name, args.connect_timeout, out, confine,
                                       args.max_refusals))
    except OSError as e:  # the command cannot be started (no such file, not executable)
        console.print(Text(f"error: cannot start the bot's command {command[0]!r}: "
                           f"{e.strerror or e}"))
        return 2
    print_report(rep)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rep.to_json(), fh, indent=2)
    return 0 if rep.clean else 1


if __name__ == "__main__":
    sys.exit(0)
