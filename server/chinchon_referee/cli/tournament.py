"""``chinchon tournament run FILE``: a whole tournament, any format, from one command.

Starts a referee in this process, launches every bot from its command line or
submission (like a chess tournament manager launching engines; the launching itself is
:mod:`..launch.launcher`'s, this module shows what it tells), runs the schedule with a
live progress bar, prints the standings and writes standings, ratings and a report to a
folder (the games' records stay in the database: ``--records`` also writes them to the
folder's ``records/``, and ``chinchon tournament records`` does later, :mod:`.records`).
Running the same file again with the same database resumes an interrupted run; once the
run is finished, running it again prints its standings (and when it finished) and
launches nothing. ``--again`` plays it once more in a new results folder
(``results/<name>-2/``, ``-3``...), never mixing the runs' records; ``--fresh`` abandons
an unfinished run (it is marked cancelled, and any records it wrote are removed from
``records/``: they stay in the database) and starts over in the same folder. When the
tournament is over its bots are told so (``PlayResponse.dismissed``) and given 5 s to
exit by themselves; a bot still running then is stopped (SIGTERM).

    chinchon tournament run sample_bots/demo_tournament.toml
    chinchon tournament check FILE       validate a declaration and show its schedule
    chinchon tournament standings DB     print the standings stored in a database
    chinchon tournament records DB --out DIR   write its game records to files
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import re
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..auth import TokenBook, new_token
from ..config import RefereeConfig
from ..declarations import toml
from ..director.director import Director
from ..host.fdlimit import raise_nofile
from ..launch.declaration import SandboxPlan, split
from ..launch.game_logs import GameLogs
from ..launch.launcher import DeclaredBot, Launcher, Output, instances
from ..launch.sandbox import SandboxUnavailable
from ..logs import LogFormat, configure
from ..referee import Referee
from ..service.server import start_server, use_loop
from ..storage import Store, StoreError, TournamentRow, open_store
from ..storage.beside import bot_stderr_file, stderr_file, stderr_folder
from ..tournament.formats.chain import plan_of
from ..tournament.formats.spec import FormatError
from ..tournament.model import SpecError, StartMode, TournamentSpec
from ..tournament.report import TournamentReport
from ..vocabulary import TournamentStatus
from .launching import Shown
from .record_files import remove_game_records
from .records import add_run_options, open_tournament, write_run_records
from .records import register as register_records
from .standings_table import console, format_summary, standings_table
from .tournament_web import keep_serving, serve_command, start_run_web

if TYPE_CHECKING:  # the web view (aiohttp) is loaded only when a run serves it
    from ..web import RunningWeb

def register(sub: Any) -> None:
    p = sub.add_parser("tournament", help="run or inspect round-robin tournaments")
    tsub = p.add_subparsers(dest="tcommand", required=True, metavar="ACTION")
    r = tsub.add_parser(
        "run", help="run a tournament declared in a TOML file, end to end",
        description="Run a tournament declared in a TOML file, end to end. Run again with "
                    "the same database: an interrupted run resumes; a finished one is "
                    "reported as finished, with its standings, and no bot is launched.")
    r.add_argument("file", help="tournament declaration (TOML)")
    r.add_argument("--results", help="results folder (default: results/<name>)")
    r.add_argument("--db", help="SQLite database file or postgresql:// URL "
                   "(default: <results>/tournament.sqlite3)")
    again = r.add_mutually_exclusive_group()
    again.add_argument("--fresh", action="store_true",
                       help="abandon an unfinished run of this declaration and start over "
                            "in the same folder (a finished run is left as it is)")
    again.add_argument("--again", action="store_true",
                       help="play a finished tournament once more, in a new results folder "
                            "(<results>-2, -3...: the first that does not exist)")
    r.add_argument("--concurrency", type=int, help="override the file's concurrency")
    r.add_argument("--games-per-pairing", type=int, help="override the file's games_per_pairing")
    r.add_argument("--log-level", default="warning")
    r.add_argument("--log-format", default=LogFormat.AUTO.value,
                   choices=[f.value for f in LogFormat],
                   help="auto (default): text on a terminal, JSON lines otherwise")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--http", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="where the web view is served while the tournament runs (default: a "
                   "free local port; its URL is printed); 'off': none")
    r.add_argument("--keep-serving", action="store_true",
                   help="once the tournament is over, keep serving its web view (the results) "
                   "until Ctrl-C; the command that serves them later is printed either way")
    add_run_options(r)
    r.set_defaults(func=cmd_run)
    c = tsub.add_parser("check", help="validate a declaration and print its structure (stages, "
                        "rounds, bracket) and the most games it can take")
    c.add_argument("file")
    c.set_defaults(func=cmd_check)
    s = tsub.add_parser("standings", help="print standings stored in a database")
    s.add_argument("db", help="SQLite database file or postgresql:// URL")
    s.add_argument("--id", help="tournament id (default: the newest)")
    s.set_defaults(func=cmd_standings)
    register_records(tsub)


def _slug(name: str) -> str:
    """A folder name for ``name``: ASCII letters, digits, '-', '_' and '.', never
    starting with '.' (so never '.' or '..'), at most 64 characters."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).lower()
    return slug.lstrip(".-")[:64].rstrip(".-") or "tournament"


def next_folder(folder: Path) -> Path:
    """``folder-2``, ``folder-3``...: the first that does not exist yet."""
    n = 2
    while (candidate := folder.with_name(f"{folder.name}-{n}")).exists():
        n += 1
    return candidate


def load(path: Path) -> tuple[TournamentSpec, SandboxPlan]:
    """A declaration file: the tournament, and how its bots are launched (sandboxed or
    not: :mod:`..launch.declaration`). SpecError naming what is wrong."""
    rest, plan = split(toml.read(path), path.parent.resolve())
    return TournamentSpec.from_dict(rest), plan


async def _play(director: Director, tid: str, name: str, stop: asyncio.Event,
                quiet: bool) -> bool:
    """Run the tournament's remaining games with a progress bar, until they are all
    played or ``stop`` is set (the games in flight are then cancelled: returns True)."""
    await director.set_status(tid, TournamentStatus.RUNNING)
    total, done = director.counts(tid)
    task = asyncio.ensure_future(director.run(tid, force_start=True))
    interrupted = False
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[leader]}"),
        console=console, disable=quiet, transient=False,
    ) as progress:
        bar = progress.add_task(name, total=total, completed=done, leader="")
        stopper = asyncio.ensure_future(stop.wait())
        while not task.done():
            await asyncio.wait({task, stopper}, timeout=0.25, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                interrupted = True
                task.cancel()
                break
            total, done = director.counts(tid)  # a format's games grow as they come due
            progress.update(bar, total=total, completed=done, leader="")
        stopper.cancel()
        total, done = director.counts(tid)
        progress.update(bar, total=total, completed=done)
    if interrupted:
        try:
            await task
        except asyncio.CancelledError:
            pass
        console.print(f"interrupted: {done} of {total} games played; run the same command "
                      "again to resume")
    else:
        await task
    return interrupted


async def run_tournament(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        spec, plan = load(path)
        changes: dict[str, Any] = {}
        if args.concurrency is not None:
            changes["concurrency"] = args.concurrency
        if args.games_per_pairing is not None:
            changes["games_per_pairing"] = args.games_per_pairing
        if changes:
            d = spec.to_dict()
            d.update(changes)
            spec = TournamentSpec.from_dict(d)
    except SpecError as e:
        console.print(f"[bold red]error:[/] {path}: {e}")
        return 2
    configure(args.log_level, args.log_format)
    raise_nofile()  # the bots' streams and processes; the web view's are its own
    results = Path(args.results) if args.results else Path("results") / _slug(spec.name)
    if args.again:
        results = next_folder(results)
    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        console.print(f"[bold red]error:[/] cannot create the results folder {results}: "
                      f"{e.strerror}")
        return 2
    target = args.db or str(results / "tournament.sqlite3")
    try:
        store = open_store(target, exclusive=True)
    except StoreError as e:
        console.print(f"[bold red]error:[/] {e}")
        return 2
    launcher = Launcher(Output(results / "logs"), base=path.parent.resolve(),
                        runtime=plan.runtime, events=Shown(console))
    try:
        return await _run_on(store, args, path, spec, results, plan, launcher)
    finally:
        launcher.close()
        store.close()


async def _run_on(store: Store, args: argparse.Namespace, path: Path,
                  spec: TournamentSpec, results: Path, plan: SandboxPlan,
                  launcher: Launcher) -> int:
    tokens = TokenBook()
    config = RefereeConfig(time_control=spec.time_control, policies=spec.policies)
    referee = Referee(config)
    director = Director(referee, store, tokens)
    # The same declaration resumes its unfinished run in this database.
    fp = spec.fingerprint()
    mine = [row for row in store.tournaments() if row.spec.get("_fingerprint") == fp]
    finished = next((row for row in mine if row.status is TournamentStatus.FINISHED), None)
    if finished is not None and not args.again:
        _show_finished(director, spec, finished, results, args.http)
        return 0
    try:  # bots will be launched: their sandbox, before anything is stored
        launcher.prepare({p.name: plan.of(p.name) for p in spec.participants if p.command})
    except SandboxUnavailable as e:
        console.print(f"[bold red]error:[/] {path}: {e}", soft_wrap=True)
        return 2
    if args.fresh:
        _abandon([row.id for row in mine if not row.status.over], director, results)
    tid = None if args.fresh else next((row.id for row in mine if not row.status.over), None)
    try:
        tid, spec, bot_tokens = _resume_or_declare(director, tokens, path, spec, tid, fp)
    except SpecError as e:
        console.print(f"[bold red]error:[/] {path}: {e}")
        return 2
    server = await start_server("127.0.0.1:0", config, tokens, referee=referee,
                                unix=launcher.socket)
    site = await start_run_web(referee, store.target, args.http)
    launcher.dismissed = director.remaining.dismissed
    # From the first bot launched on, Ctrl-C (or SIGTERM) stops the run the same way
    # whenever it comes: the bots are stopped, the server too, and what was played stays.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    interrupted = False
    over = False  # played to its end: its bots were dismissed
    game_logs: GameLogs | None = None
    try:
        await launcher.start(server.target, _bots(launcher, spec, plan, bot_tokens))
        game_logs = _cut_stderr_per_game(referee, store, launcher, bot_tokens)
        interrupted = await _start_and_play(director, tid, spec, launcher, site, stop, args.quiet)
        over = not interrupted
    finally:
        keep = site if over and args.keep_serving else None
        if site is not None and keep is None:
            await site.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await launcher.stop(dismissed=over)
        await server.stop(grace=1.0)
        if game_logs is not None:
            game_logs.finish()
    _write_results(director, tid, spec, results, args)
    if over:
        await keep_serving(keep, store.target, args.http)
    return 130 if interrupted else 0


def _show_finished(director: Director, spec: TournamentSpec, finished: TournamentRow,
                   results: Path, http: str) -> None:
    """Played to the end: say so, show what it gave (and launch nothing)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(finished.finished or 0))
    console.print(Text(f"{spec.name} ({finished.id}) is finished: it finished on {when}; "
                       f"its results are in {results}/"))
    st = director.standings(finished.id)
    console.print(standings_table(st, f"{spec.name}: standings after {st.games} games"))
    console.print("to play it once more in a new results folder: --again")
    console.print(f"to serve its results in the web view: "
                  f"{serve_command(director.store.target, http)}", soft_wrap=True)


def _resume_or_declare(director: Director, tokens: TokenBook, path: Path, spec: TournamentSpec,
                       tid: str | None, fp: str) -> tuple[str, TournamentSpec, dict[str, str]]:
    """The run to play: ``tid`` resumed (its bots' tokens from the file, or new), or the
    declaration stored now, each bot with a token (registered ones of an earlier run in
    this database take the new one). SpecError if the declaration is refused."""
    store = director.store
    if tid is not None:
        spec = director.spec_of(tid)
        parts = {p.name: p for p in load(path)[0].participants}
        bot_tokens = {}
        for p in spec.participants:
            tok = parts[p.name].token or new_token()
            bot_tokens[p.name] = tok
            tokens.add(p.name, tok)
        total, done = director.counts(tid)
        console.print(f"resuming {tid}: {done} of {total} games already played")
        return tid, spec, bot_tokens
    spec = dataclasses.replace(spec, participants=tuple(
        dataclasses.replace(p, token=p.token or new_token()) for p in spec.participants))
    tid, created = director.create(spec, replace_tokens=True)
    made = store.tournament(tid)
    assert made is not None
    made.spec["_fingerprint"] = fp
    store.set_tournament_spec(tid, made.spec)
    return tid, director.spec_of(tid), {p.name: p.token for p in created}


def _bots(launcher: Launcher, spec: TournamentSpec, plan: SandboxPlan,
          tokens: dict[str, str]) -> list[DeclaredBot]:
    """The participants with a command, as the launcher starts them: each with its
    token, its sandbox and its instances (at most the concurrency)."""
    n, k, conc = len(spec.participants), spec.table_size, spec.concurrency
    return [launcher.declared(p.name, p.command, tokens[p.name], plan.of(p.name),
                              instances(p.instances, concurrency=conc, bots=n, table_size=k))
            for p in spec.participants if p.command]


def _cut_stderr_per_game(referee: Referee, store: Store, launcher: Launcher,
                         bot_tokens: dict[str, str]) -> GameLogs | None:
    """Each game's share of the bots' stderr, and each bot's lines no one game owns,
    kept beside the database (launch/game_logs.py; served by web/botlogs.py)."""
    folder = stderr_folder(store.target)
    if folder is None:
        return None
    cut = GameLogs(launcher.files, lambda gid, seat: stderr_file(folder, gid, seat),
                   list(bot_tokens.values()), lambda bot: bot_stderr_file(folder, bot))
    referee.services.on_game = cut
    return cut


async def _start_and_play(director: Director, tid: str, spec: TournamentSpec,
                          launcher: Launcher, site: RunningWeb | None, stop: asyncio.Event,
                          quiet: bool) -> bool:
    """Wait for the launched bots (boundedly) and play; True if interrupted."""
    loop = asyncio.get_running_loop()
    total, done = director.counts(tid)
    if spec.start in (StartMode.MANUAL, StartMode.WHEN_CONNECTED):
        # This command is the manual start. Bots that are slow to start (a busy
        # machine, a JVM) are waited for, boundedly (bots whose processes exited are
        # not): the reconnect grace alone would make them forfeit their first games.
        deadline = loop.time() + spec.connect_wait
        while loop.time() < deadline and not stop.is_set():
            if await director.referee.lobby.wait_all(launcher.alive(), 0.2):
                break
    if stop.is_set():
        console.print(f"interrupted before the first game: {done} of {total} games "
                      "played; run the same command again to resume")
        return True
    title = spec.name if site is None else f"{spec.name} {site.url}"
    return await _play(director, tid, title, stop, quiet)


def _write_results(director: Director, tid: str, spec: TournamentSpec, results: Path,
                   args: argparse.Namespace) -> None:
    """The standings printed; report, standings, ratings (and records) written."""
    store = director.store
    st, shape = director.report_parts(tid)
    console.print(standings_table(st, f"{spec.name}: standings after {st.games} games"))
    if shape is not None:
        console.print(format_summary(shape))
    if st.duplicate_variance_reduction is not None:
        console.print(f"duplicate deals removed {st.duplicate_variance_reduction:.0%} of the "
                      "score variance of independent deals")
    TournamentReport.of(tid, spec, st, store.tournament(tid), finished=time.time(),
                        structure=shape).write(results, st)
    written = "report.md, standings.json, standings.csv, ratings.svg"
    if shape is not None:
        written += ", structure.json"
    if args.records:
        n = write_run_records(store, tid, results, args.record_format)
        written += f", {n} game records in records/"
    console.print(f"results written to {results}/ ({written})")
    if not args.records:
        console.print(f"game records: in the database; to files: chinchon tournament records "
                      f"{store.target} --id {tid} --out DIR")


def _abandon(tids: list[str], director: Director, results: Path) -> None:
    """``--fresh``: the unfinished runs ``tids`` are abandoned. Each is marked cancelled
    (it is never resumed, and none of its bots is kept waiting for it), and any records
    it wrote to ``results/records`` (``--records``) are removed, so that the folder holds
    the new run's records only (the database keeps the old games)."""
    for tid in tids:
        director.store.set_tournament_status(tid, TournamentStatus.CANCELLED)
        director.remaining.reload()
        for game in director.store.schedule(tid):  # ids only, no record read
            remove_game_records(results / "records", [game.id])
        console.print(f"abandoned the unfinished run {tid} (--fresh): starting over")


def cmd_run(args: argparse.Namespace) -> int:
    use_loop("auto")
    return asyncio.run(run_tournament(args))


def cmd_check(args: argparse.Namespace) -> int:
    try:
        spec, plan = load(Path(args.file))
        spec = spec.with_seed()
    except SpecError as e:
        console.print(f"[bold red]error:[/] {args.file}: {e}")
        return 1
    try:
        summary, lines = plan_of(spec).describe()
    except FormatError as e:
        console.print(f"[bold red]error:[/] {args.file}: {e}")
        return 1
    console.print(f"{spec.name}: valid. {summary}")
    for line in lines:
        console.print(f"  {line}")
    _say_sandbox(plan)
    return 0


def _say_sandbox(plan: SandboxPlan) -> None:
    if plan.sandboxed:
        limits = ", ".join(f"{k} {v}" for k, v in plan.limits.to_dict().items())
        console.print(f"  sandboxed: {', '.join(plan.sandboxed)} (limits: {limits}; per-bot "
                      "tables override them)", soft_wrap=True)
    if plan.sandboxed or plan.bounded:
        console.print(f"  a submission's build (chinchon bots check --declaration): "
                      f"build_timeout {plan.build.timeout:g} s, build_disk_mb "
                      f"{plan.build.disk_mb}, submission_mb {plan.intake.size_mb}, "
                      f"submission_files {plan.intake.files}", soft_wrap=True)


def cmd_standings(args: argparse.Namespace) -> int:
    found = open_tournament(args.db, args.id)
    if isinstance(found, int):
        return found
    store, row = found
    try:
        director = Director(Referee(), store, TokenBook())
        st, shape = director.report_parts(row.id)
        console.print(standings_table(st, f"{row.name} ({row.status})"))
        if shape is not None:
            console.print(format_summary(shape))
    finally:
        store.close()
    return 0
