"""``chinchon tournament run FILE``: a whole round-robin from one command.

Starts a referee in this process, launches every bot from its command line (like a
chess tournament manager launching engines), runs the schedule with a live progress
bar, prints the standings and writes standings, ratings and a report to a folder (the
games' records stay in the database: ``--records`` also writes them to the folder's
``records/``, and ``chinchon tournament records`` does later, :mod:`.records_cli`).
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
import math
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..auth import TokenBook, new_token
from ..config import RefereeConfig
from ..declarations import toml
from ..director.director import Director
from ..host.fdlimit import raise_nofile
from ..launch.bots import BotProcess, Keep, Sandboxed, launch
from ..launch.confine import Confinement
from ..launch.declaration import SandboxPlan, split
from ..launch.game_logs import GameLogs
from ..launch.sandbox import SandboxSpec, SandboxUnavailable, python_runtime
from ..logs import LogFormat, configure, get_logger
from ..referee import Referee
from ..service.server import start_server, use_loop
from ..storage import Store, StoreError, TournamentRow, open_store
from ..storage.beside import bot_stderr_file, stderr_file, stderr_folder
from ..tournament.formats.plan import layout_of
from ..tournament.formats.structure import describe
from ..tournament.model import Participant, SpecError, StartMode, TournamentSpec
from ..tournament.report import TournamentReport
from ..vocabulary import TournamentStatus
from ..web.settings import parse_http
from .record_files import remove_game_records
from .records import add_run_options, open_tournament, write_run_records
from .records import register as register_records
from .standings_table import console, format_summary, standings_table

if TYPE_CHECKING:  # the web view (aiohttp) is loaded only when a run serves it
    from ..web import RunningWeb

log = get_logger("tournament")


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


def _command(p: Participant) -> list[str]:
    out = []
    for part in p.command:
        out.append(part.replace("{python}", sys.executable))
    return out


def load(path: Path) -> tuple[TournamentSpec, SandboxPlan]:
    """A declaration file: the tournament, and how its bots are launched (sandboxed or
    not: :mod:`..launch.declaration`). SpecError naming what is wrong."""
    rest, plan = split(toml.read(path), path.parent.resolve())
    return TournamentSpec.from_dict(rest), plan


@dataclass
class Sandboxing:
    """The sandbox of a run's launched bots: the plan, this machine's confinement and
    the referee's Unix socket (in a private folder of its own)."""

    plan: SandboxPlan
    confinement: Confinement | None = None
    socket: Path | None = None

    def prepare(self, spec: TournamentSpec) -> None:
        """Just before the bots of ``spec`` are launched (a finished run launches none,
        and needs no sandbox): this machine's confinement and the socket's folder;
        SandboxUnavailable when a bot is to be sandboxed and cannot be here; the
        warnings (no cgroups, bots unsandboxed) printed."""
        launched = {p.name for p in spec.participants if p.command}
        boxed = [n for n in launched if self.plan.of(n).sandboxed]
        loose = sorted(launched - set(boxed))
        if loose:
            console.print(f"[yellow]note:[/] {len(loose)} bot{'s' if len(loose) > 1 else ''} "
                          f"run unsandboxed, as you ({', '.join(loose)}); sandbox = true "
                          "confines them (docs/security.md)", soft_wrap=True)
        if not boxed:
            return
        try:
            self.confinement = Confinement.find()
        except SandboxUnavailable as e:
            raise SandboxUnavailable(
                f"{', '.join(sorted(boxed))} {'is' if len(boxed) == 1 else 'are'} to run "
                f"sandboxed, and no sandbox can be made here: {e}") from None
        if self.confinement.warning:
            console.print(f"[yellow]warning:[/] {self.confinement.warning}", soft_wrap=True)
        folder = Path(tempfile.mkdtemp(prefix="chinchon-"))  # mode 0700: this user only
        self.socket = folder / "referee.sock"

    def spec_for(self, name: str) -> SandboxSpec | None:
        bot = self.plan.of(name)
        if not bot.sandboxed or self.socket is None or bot.folder is None:
            return None
        return SandboxSpec(bot.folder, self.socket, bot.limits,
                           python_runtime() + self.plan.runtime)

    def close(self) -> None:
        if self.confinement is not None:
            self.confinement.close()
        if self.socket is not None:
            shutil.rmtree(self.socket.parent, ignore_errors=True)


class BotLauncher:
    """Starts and stops the bots' processes (:mod:`.launcher`); their stderr goes to log
    files, ``<logs>/<bot>.<instance>.log``. Sandboxed bots (``sandboxing``) run in
    their folders, confined; a bot that ends before it is dismissed is reported
    (``dismissed``: whether the referee has told a bot it has no game left)."""

    def __init__(self, spec: TournamentSpec, base: Path, logs: Path, target: str,
                 tokens: dict[str, str], sandboxing: Sandboxing | None = None,
                 dismissed: Callable[[str], bool] = lambda _bot: False) -> None:
        self.spec = spec
        self.dismissed = dismissed
        self.base = base
        self.logs = logs
        self.target = target
        self.tokens = tokens
        self.sandboxing = sandboxing or Sandboxing(SandboxPlan())
        self.procs: list[tuple[str, BotProcess]] = []
        self.watches: list[asyncio.Future[None]] = []
        self.stopping = False
        #: Each launched bot's stderr files, one per instance.
        self.files: dict[str, list[Path]] = {}

    def instances(self, p: Participant) -> int:
        """Copies of ``p``'s command to launch: as declared, or enough streams for its
        share of the games at once; never more than the concurrency (a bot is in at most
        that many games at once), which is itself at most MAX_CONCURRENCY."""
        conc = self.spec.concurrency
        if p.instances:
            return min(p.instances, conc)
        n, k = len(self.spec.participants), self.spec.table_size
        return max(1, min(conc, math.ceil(conc * k / n)))

    async def start(self) -> None:
        # The bots' whole stderr: the organizer's (this user's) only.
        self.logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.logs.chmod(0o700)
        for p in self.spec.participants:
            if not p.command:
                continue
            cmd = _command(p)
            box = self.sandboxing.spec_for(p.name)
            confinement = self.sandboxing.confinement
            sandbox = Sandboxed(confinement, box, p.name) if box and confinement else None
            for i in range(self.instances(p)):
                try:
                    # A sandboxed bot's stdout is kept too (both bounded by its file_size_mb).
                    out = self.logs / f"{p.name}.{i}.out.log" if sandbox else Keep.DISCARD
                    proc = await launch(cmd, self.target, self.tokens[p.name], cwd=self.base,
                                        stdout=out, stderr=self.logs / f"{p.name}.{i}.log",
                                        sandbox=sandbox)
                except OSError as e:
                    console.print(f"[yellow]warning:[/] cannot start {p.name}: {e}; "
                                  "its games will be forfeited")
                    break
                self.procs.append((p.name, proc))
                self.watches.append(asyncio.ensure_future(self._watch(p.name, i, proc)))
                self.files.setdefault(p.name, []).append(self.logs / f"{p.name}.{i}.log")

    async def _watch(self, name: str, instance: int, proc: BotProcess) -> None:
        """Say so when a bot's process ends before the run dismisses or stops it (a crash,
        or its sandbox's limits: killed for memory...); its games go on without it. A bot
        that exits 0 once dismissed does what it was asked (it is logged when stopped)."""
        await proc.proc.wait()
        oom = proc.oom_killed()
        code = proc.proc.returncode
        if self.stopping or code is None or (code == 0 and self.dismissed(name)):
            return
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        if code > 128 and code - 128 in signal.valid_signals():  # a sandbox's: as a shell's
            how += f" (killed by {signal.Signals(code - 128).name})"
        if oom:
            how += " (out of memory: its sandbox's memory_mb)"
        log.warning("bot_ended", bot=name, instance=instance, code=code, oom=oom)
        console.print(f"[yellow]warning:[/] {name} (instance {instance}) ended during the run: "
                      f"{how}; see {self.logs / f'{name}.{instance}.log'}", soft_wrap=True)

    async def stop(self, dismissed: bool = False) -> None:
        """Stop them all at once. ``dismissed``: the tournament is over and the referee
        told the bots (``PlayResponse.dismissed``): each has 5 s to exit by itself first.
        Then SIGTERM, and SIGKILL 5 s later. Each exit is logged (``bot_exited``), and a
        dismissed bot that had to be stopped is warned about."""

        async def one(name: str, proc: BotProcess) -> None:
            code, by_itself = await proc.finish(5.0 if dismissed else 0.0)
            log.info("bot_exited", bot=name, pid=proc.pid, code=code, by_itself=by_itself)
            if dismissed and not by_itself:
                log.warning("bot_stopped", bot=name, pid=proc.pid,
                            why="it did not exit within 5 s of being dismissed at the end "
                                "of the tournament")

        self.stopping = True
        await asyncio.gather(*(one(name, proc) for name, proc in self.procs))
        for watch in self.watches:
            watch.cancel()


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
    sandboxing = Sandboxing(plan)
    try:
        return await _run_on(store, args, path, spec, results, sandboxing)
    finally:
        sandboxing.close()
        store.close()


async def _run_on(store: Store, args: argparse.Namespace, path: Path,
                  spec: TournamentSpec, results: Path, sandboxing: Sandboxing) -> int:
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
        sandboxing.prepare(spec)
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
                                unix=sandboxing.socket)
    site = await _web(referee, store.target, args.http)
    launcher = BotLauncher(spec, path.parent.resolve(), results / "logs", server.target, bot_tokens,
                           sandboxing, director.remaining.dismissed)
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
        await launcher.start()
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
        await _keep_serving(keep, store.target, args.http)
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


def _cut_stderr_per_game(referee: Referee, store: Store, launcher: BotLauncher,
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
                          launcher: BotLauncher, site: RunningWeb | None, stop: asyncio.Event,
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
            alive = sorted({n for n, proc in launcher.procs if proc.returncode is None})
            if await director.referee.lobby.wait_all(alive, 0.2):
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


def serve_command(db: str, http: str) -> str:
    """The command that serves a finished run's results in the web view, later: on the
    run's own ``--http`` address if one was given, else on port 8080 of this machine."""
    try:
        host, port = parse_http(http)
    except ValueError:
        host, port = "127.0.0.1", 0
    where = f"{host}:{port or 8080}"
    return f"chinchon serve --db {shlex.quote(db)} --http {where}"


async def _keep_serving(site: RunningWeb | None, db: str, http: str) -> None:
    """``--keep-serving``: the run's web view goes on serving its results until Ctrl-C
    (or SIGTERM); then, either way, the command that serves them later."""
    if site is not None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        console.print(f"serving the results at {site.url} until Ctrl-C (--keep-serving)",
                      soft_wrap=True)
        try:
            await stop.wait()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await site.stop()
    console.print(f"to serve these results in the web view: {serve_command(db, http)}",
                  soft_wrap=True)


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


async def _web(referee: Referee, db: str, http: str) -> RunningWeb | None:
    """The web view of the run (docs/web.md), its URL printed; None if 'off' or the
    address cannot be had (the tournament runs anyway)."""
    if http == "off":
        return None
    from ..web import WebContext, start_web

    try:
        site = await start_web(WebContext(referee=referee, db=db), *parse_http(http))
    except (ValueError, OSError) as e:
        console.print(f"[yellow]no web view:[/] {e}")
        return None
    console.print(f"web view: {site.url}", soft_wrap=True)
    return site


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
    if not spec.format.legacy:
        lines = describe(spec)
        most = sum(s.most for s in layout_of(spec))
        console.print(f"{spec.name}: valid. {len(spec.participants)} bots, {len(lines)} "
                      f"stage{'s' if len(lines) > 1 else ''}, at most {most:,} games")
        for line in lines:
            console.print(f"  {line}")
        _say_sandbox(plan)
        return 0
    try:
        rr = Director.schedule(spec, "check")
    except SpecError as e:
        console.print(f"[bold red]error:[/] {args.file}: {e}")
        return 1
    console.print(f"{spec.name}: valid. {len(spec.participants)} bots, {len(rr.tables)} tables "
                  f"of {spec.table_size}, {rr.games_per_table} games per table, {len(rr)} games")
    _say_sandbox(plan)
    return 0


def _say_sandbox(plan: SandboxPlan) -> None:
    if plan.sandboxed:
        limits = ", ".join(f"{k} {v}" for k, v in plan.limits.to_dict().items())
        console.print(f"  sandboxed: {', '.join(plan.sandboxed)} (limits: {limits}; per-bot "
                      "tables override them)", soft_wrap=True)


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
