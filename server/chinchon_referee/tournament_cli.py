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
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .auth import TokenBook, new_token
from .config import RefereeConfig
from .director import Director
from .launcher import BotProcess, Keep, launch
from .logs import LogFormat, configure, get_logger
from .record_files import remove_game_records
from .records_cli import add_run_options, open_tournament, write_run_records
from .records_cli import register as register_records
from .referee import Referee
from .report import write_results
from .server import start_server, use_loop
from .standings import Row, Standings
from .storage import Store, StoreError, open_store
from .tournament import Participant, SpecError, StartMode, TournamentSpec
from .vocabulary import TournamentStatus
from .web import RunningWeb, WebContext, parse_http, start_web

console = Console(highlight=False, soft_wrap=True)
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
    add_run_options(r)
    r.set_defaults(func=cmd_run)
    c = tsub.add_parser("check", help="validate a declaration and print its schedule summary")
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


def _command(p: Participant, base: Path) -> list[str]:
    out = []
    for part in p.command:
        out.append(part.replace("{python}", sys.executable))
    return out


#: The standings columns after the rank and the bot: (header, what it says, its cell).
_STANDINGS_COLUMNS: tuple[tuple[str, str, Callable[[Row], str]], ...] = (
    ("pts", "match points (win 1, draw ½)", lambda r: f"{r.match_points:g}"),
    ("W-D-L", "", lambda r: f"{r.wins}-{r.draws}-{r.losses}"),
    ("hands", "hands won", lambda r: str(r.hands_won)),
    ("chin", "chinchones", lambda r: str(r.chinchones)),
    ("pts/h", "points per hand", lambda r: f"{r.avg_points_per_hand:.1f}"),
    ("ff/to/il", "forfeits, timeouts, illegal actions",
     lambda r: f"{r.forfeits}/{r.timeouts}/{r.illegal_actions}"),
    ("rating", "", lambda r: f"{r.rating:.0f}"),
    ("±95%", "half-width of the rating's 95% interval",
     lambda r: f"{(r.rating_high - r.rating_low) / 2:.0f}"),
    ("P>nx", "likelihood of being stronger than the next bot",
     lambda r: "" if r.p_better_than_next is None else f"{r.p_better_than_next:.2f}"),
)
#: Which columns a narrow terminal loses first.
_DROP_ORDER = ("chin", "pts/h", "hands", "P>nx", "±95%", "W-D-L", "ff/to/il", "rating")


def standings_table(st: Standings, title: str, width: int | None = None) -> Table:
    """The standings as a terminal table that fits ``width`` columns (default: the
    terminal's): on a narrow one the least needed columns are left out, whole."""
    width = width or console.width
    shown = [c[0] for c in _STANDINGS_COLUMNS]
    while True:
        t = _standings_table(st, title, shown)
        if console.measure(t, options=console.options.update_width(10_000)).maximum <= width:
            break
        drop = next((c for c in _DROP_ORDER if c in shown), None)
        if drop is None:
            break
        shown.remove(drop)
    notes = "; ".join(f"{h}: {what}" for h, what, _ in _STANDINGS_COLUMNS if h in shown and what)
    left_out = [c[0] for c in _STANDINGS_COLUMNS if c[0] not in shown]
    if left_out:
        notes += f" ({', '.join(left_out)}: left out, too narrow; see standings.csv)"
    t.caption = Text(notes, no_wrap=False, overflow="fold", justify="left")
    return t


def _standings_table(st: Standings, title: str, shown: list[str]) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    longest = max((len(r.bot) for r in st.rows), default=3)
    t.add_column("#", justify="right")
    t.add_column("bot", no_wrap=True, min_width=longest)
    cols = [c for c in _STANDINGS_COLUMNS if c[0] in shown]
    for h, _, _ in cols:
        t.add_column(h, justify="right", no_wrap=True)
    for r in st.rows:
        t.add_row(str(r.rank), r.bot, *(cell(r) for _, _, cell in cols))
    return t


class BotLauncher:
    """Starts and stops the bots' processes (:mod:`.launcher`); their stderr goes to log
    files, ``<logs>/<bot>.<instance>.log``."""

    def __init__(self, spec: TournamentSpec, base: Path, logs: Path, target: str,
                 tokens: dict[str, str]) -> None:
        self.spec = spec
        self.base = base
        self.logs = logs
        self.target = target
        self.tokens = tokens
        self.procs: list[tuple[str, BotProcess]] = []

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
        self.logs.mkdir(parents=True, exist_ok=True)
        for p in self.spec.participants:
            if not p.command:
                continue
            cmd = _command(p, self.base)
            for i in range(self.instances(p)):
                try:
                    proc = await launch(cmd, self.target, self.tokens[p.name], cwd=self.base,
                                        stdout=Keep.DISCARD,
                                        stderr=self.logs / f"{p.name}.{i}.log")
                except OSError as e:
                    console.print(f"[yellow]warning:[/] cannot start {p.name}: {e}; "
                                  "its games will be forfeited")
                    break
                self.procs.append((p.name, proc))

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

        await asyncio.gather(*(one(name, proc) for name, proc in self.procs))


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
            total, done = director.counts(tid)
            progress.update(bar, completed=done, leader="")
        stopper.cancel()
        total, done = director.counts(tid)
        progress.update(bar, completed=done)
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
        spec = TournamentSpec.from_toml(path)
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
    try:
        return await _run_on(store, args, path, spec, results)
    finally:
        store.close()


async def _run_on(store: Store, args: argparse.Namespace, path: Path,
                  spec: TournamentSpec, results: Path) -> int:
    tokens = TokenBook()
    config = RefereeConfig(time_control=spec.time_control, policies=spec.policies)
    referee = Referee(config)
    director = Director(referee, store, tokens)
    # The same declaration resumes its unfinished run in this database.
    fp = spec.fingerprint()
    tid = None
    mine = [row for row in store.tournaments() if row.spec.get("_fingerprint") == fp]
    finished = next((row for row in mine if row.status is TournamentStatus.FINISHED), None)
    if finished is not None and not args.again:
        # Played to the end: say so, show what it gave, and launch nothing.
        when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(finished.finished or 0))
        console.print(Text(f"{spec.name} ({finished.id}) is finished: it finished on {when}; "
                           f"its results are in {results}/"))
        st = director.standings(finished.id)
        console.print(standings_table(st, f"{spec.name}: standings after {st.games} games"))
        console.print("to play it once more in a new results folder: --again")
        return 0
    if not args.fresh:
        tid = next((row.id for row in mine if not row.status.over), None)
    else:
        _abandon([row.id for row in mine if not row.status.over], director, results)
    if tid is not None:
        spec = director.spec_of(tid)
        parts = {p.name: p for p in TournamentSpec.from_toml(path).participants}
        bot_tokens = {}
        for p in spec.participants:
            tok = parts[p.name].token or new_token()
            bot_tokens[p.name] = tok
            tokens.add(p.name, tok)
        total, done = director.counts(tid)
        console.print(f"resuming {tid}: {done} of {total} games already played")
    else:
        # This run launches the bots itself: each gets a token now (registered ones of
        # an earlier run in this database take the new one).
        spec = dataclasses.replace(spec, participants=tuple(
            dataclasses.replace(p, token=p.token or new_token()) for p in spec.participants))
        try:
            tid_new, created = director.create(spec, replace_tokens=True)
        except SpecError as e:
            console.print(f"[bold red]error:[/] {path}: {e}")
            return 2
        tid = tid_new
        made = store.tournament(tid)
        assert made is not None
        made.spec["_fingerprint"] = fp
        store.set_tournament_spec(tid, made.spec)
        bot_tokens = {p.name: p.token for p in created}
        spec = director.spec_of(tid)
    server = await start_server("127.0.0.1:0", config, tokens, referee=referee)
    site = await _web(referee, store.target, args.http)
    launcher = BotLauncher(spec, path.parent.resolve(), results / "logs", server.target, bot_tokens)
    # From the first bot launched on, Ctrl-C (or SIGTERM) stops the run the same way
    # whenever it comes: the bots are stopped, the server too, and what was played stays.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    interrupted = False
    over = False  # played to its end: its bots were dismissed
    total, done = director.counts(tid)
    try:
        await launcher.start()
        if spec.start in (StartMode.MANUAL, StartMode.WHEN_CONNECTED):
            # This command is the manual start. Bots that are slow to start (a busy
            # machine, a JVM) are waited for, boundedly (bots whose processes exited are
            # not): the reconnect grace alone would make them forfeit their first games.
            deadline = loop.time() + spec.connect_wait
            while loop.time() < deadline and not stop.is_set():
                alive = sorted({n for n, proc in launcher.procs if proc.returncode is None})
                if await referee.lobby.wait_all(alive, 0.2):
                    break
        if stop.is_set():
            interrupted = True
            console.print(f"interrupted before the first game: {done} of {total} games "
                          "played; run the same command again to resume")
        else:
            title = spec.name if site is None else f"{spec.name} {site.url}"
            interrupted = await _play(director, tid, title, stop, args.quiet)
            over = not interrupted
    finally:
        if site is not None:
            await site.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await launcher.stop(dismissed=over)
        await server.stop(grace=1.0)
    st = director.standings(tid)
    console.print(standings_table(st, f"{spec.name}: standings after {st.games} games"))
    if st.duplicate_variance_reduction is not None:
        console.print(f"duplicate deals removed {st.duplicate_variance_reduction:.0%} of the "
                      "score variance of independent deals")
    info = {"tournament": tid, "games": st.games, "table size": spec.table_size,
            "time control": f"{spec.time_control.per_move:g} s per move + "
                            f"{spec.time_control.bank:g} s bank",
            "policies": asdict(spec.policies)}
    done_row = store.tournament(tid)
    write_results(results, spec.name, st, info, rules=spec.rules.to_dict(),
                  started=done_row.started if done_row else None,
                  finished=(done_row.finished if done_row else None) or time.time())
    written = "report.md, standings.json, standings.csv, ratings.svg"
    if args.records:
        n = write_run_records(store, tid, results, args.record_format)
        written += f", {n} game records in records/"
    console.print(f"results written to {results}/ ({written})")
    if not args.records:
        console.print(f"game records: in the database; to files: chinchon tournament records "
                      f"{store.target} --id {tid} --out DIR")
    return 130 if interrupted else 0


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
        spec = TournamentSpec.from_toml(args.file).with_seed()
    except SpecError as e:
        console.print(f"[bold red]error:[/] {args.file}: {e}")
        return 1
    try:
        rr = Director.schedule(spec, "check")
    except SpecError as e:
        console.print(f"[bold red]error:[/] {args.file}: {e}")
        return 1
    console.print(f"{spec.name}: valid. {len(spec.participants)} bots, {len(rr.tables)} tables "
                  f"of {spec.table_size}, {rr.games_per_table} games per table, {len(rr)} games")
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    found = open_tournament(args.db, args.id)
    if isinstance(found, int):
        return found
    store, row = found
    try:
        director = Director(Referee(), store, TokenBook())
        console.print(standings_table(director.standings(row.id), f"{row.name} ({row.status})"))
    finally:
        store.close()
    return 0
