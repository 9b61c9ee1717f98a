"""``chinchon match``: is version 2 stronger than version 1, and by how much?

A head-to-head (or a gauntlet: one candidate against several opponents) of bots given
as commands, on a private referee: each deal played twice with the seats swapped
(duplicate pairs), ``--concurrency`` games at once, under a tournament's clock and
policies. It prints a live line (pairs, score, Elo with its 95% interval, and with
``--sprt`` the log-likelihood ratio and its bounds) and stops at the game limit or, with
``--sprt``, as soon as the test decides. Everything goes to ``--out DIR``: the database
with every game's record (``match.sqlite3``), ``summary.json``, ``summary.md``,
``pairs.csv``, ``records/`` and the bots' logs; run the same command again and an
interrupted match resumes where it stopped (a finished one prints its summary).

    chinchon match --candidate "python -m chinchon.sdk --bot v2.py:Bot" \\
        --baseline "python -m chinchon.sdk --bot v1.py:Bot" \\
        --games 2000 --concurrency 2 --sprt elo0=0 elo1=10 alpha=0.05 beta=0.05

Exit codes: 0 H1 accepted (without --sprt: every game played), 1 H0 accepted, 3 the
game limit reached with the test undecided, 2 usage errors, 130 interrupted.
Statistics: docs/match.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import json
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet, RuleSetError
from rich.markup import escape

from ..auth import TokenBook, digest, new_token
from ..config import Policies, RefereeConfig, TimeControl
from ..director.director import Director
from ..host.fdlimit import raise_nofile
from ..launch.declaration import BotPlan, SandboxPlan
from ..launch.launcher import Launcher, Output, instances
from ..launch.limits import LimitError, Limits
from ..launch.sandbox import SandboxUnavailable
from ..logs import configure
from ..referee import Referee
from ..service.server import start_server, use_loop
from ..storage import Store, StoreError, TournamentRow, open_store
from ..tournament.formats.spec import MAX_GAMES
from ..tournament.match import CANDIDATE, Tally, match_schedule
from ..tournament.model import (
    MAX_CONCURRENCY,
    Participant,
    SpecError,
    TournamentSpec,
    declared,
)
from ..tournament.sprt import SprtError, SprtSpec, Verdict
from ..vocabulary import TournamentStatus
from .launching import Shown
from .match_output import MatchProgress, Outcome, exit_code, write_outputs
from .standings_table import console

#: The baseline's name (the first opponent); more opponents are opponent-2, -3...
BASELINE = "baseline"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "match", help="head-to-head of bot commands in duplicate pairs: Elo with its "
        "interval, SPRT", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidate", required=True, metavar="CMD",
                   help="the candidate's command line (one string; {python} is this Python)")
    p.add_argument("--baseline", metavar="CMD", help="the opponent's command line")
    p.add_argument("--opponent", action="append", default=[], metavar="CMD",
                   help="another opponent (a gauntlet; repeatable): opponent-2, -3...")
    p.add_argument("--games", type=int, default=500, metavar="PAIRS",
                   help="most pairs (two games of one deal) against each opponent "
                   "(default 500)")
    p.add_argument("--concurrency", type=int, default=2, help="games at once (default 2)")
    p.add_argument("--sprt", nargs="+", metavar="TERM",
                   help="sequential test: elo0=0 elo1=5 alpha=0.05 beta=0.05 (logistic Elo; "
                   "one opponent only)")
    p.add_argument("--out", default="match-results", metavar="DIR",
                   help="results folder (default match-results); the same command resumes")
    p.add_argument("--seed", default="", help="seed of the deals (default: random, kept)")
    p.add_argument("--rules", help="rule set file (TOML or JSON)")
    p.add_argument("--per-move", type=float, default=TimeControl.per_move,
                   help="seconds per decision")
    p.add_argument("--bank", type=float, default=TimeControl.bank, help="time bank per game")
    p.add_argument("--max-retries", type=int, default=Policies.max_illegal_retries,
                   help="retries after an illegal action")
    p.add_argument("--max-strikes", type=int, default=Policies.max_strikes,
                   help="strikes before a forfeit")
    p.add_argument("--sandbox", metavar="FOLDER",
                   help="run every bot sandboxed with FOLDER its one readable folder (no "
                   "network; docs/security.md)")
    p.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="with --sandbox: a limit, e.g. memory_mb=256 (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no live line")
    p.add_argument("--log-level", default="warning")
    p.set_defaults(func=cmd_match)


class UsageError(ValueError):
    """A match that cannot be run as asked; the message says why."""


@dataclass(frozen=True)
class MatchPlan:
    spec: TournamentSpec
    opponents: tuple[str, ...]
    pairs: int
    sprt: SprtSpec | None
    fingerprint: str
    sandbox: SandboxPlan

    def settings(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "opponents": list(self.opponents),
                "pairs": self.pairs, "sprt": self.sprt.to_dict() if self.sprt else None}


def plan_of(args: argparse.Namespace) -> MatchPlan:
    """The match the arguments ask for; UsageError naming what is wrong."""
    commands = [args.baseline] if args.baseline else []
    commands += args.opponent
    if not commands:
        raise UsageError("an opponent is needed: --baseline CMD (and --opponent CMD...)")
    names = [BASELINE if args.baseline else "opponent-1"]
    names += [f"opponent-{i}" for i in range(2, len(commands) + 1)]
    try:
        sprt = SprtSpec.parse(args.sprt) if args.sprt is not None else None
    except SprtError as e:
        raise UsageError(f"--sprt: {e}") from None
    if sprt is not None and len(commands) > 1:
        raise UsageError("--sprt tests one candidate against one opponent: give one "
                         "--baseline (a gauntlet reports each opponent's Elo)")
    if args.games < 1 or 2 * args.games * len(commands) > MAX_GAMES:
        raise UsageError(f"--games: 1 to {MAX_GAMES // (2 * len(commands))} pairs per "
                         f"opponent here, got {args.games}")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency: 1 to {MAX_CONCURRENCY}, got {args.concurrency}")
    argv = {CANDIDATE: _split(args.candidate, "--candidate")}
    argv.update({n: _split(c, n) for n, c in zip(names, commands, strict=True)})
    rules = _rules(args.rules)
    try:
        spec = TournamentSpec(
            name="match", participants=tuple(Participant(n, command=tuple(c))
                                             for n, c in argv.items()),
            rules=rules, time_control=TimeControl(per_move=args.per_move, bank=args.bank),
            policies=Policies(max_illegal_retries=args.max_retries,
                              max_strikes=args.max_strikes),
            duplicate_deals=True, concurrency=args.concurrency, seed=args.seed,
            games_per_pairing=2)
    except (SpecError, ValueError) as e:
        raise UsageError(str(e)) from None
    ident = {"commands": argv, "games": args.games, "seed": args.seed,
             "sprt": sprt.to_dict() if sprt else None, "rules": rules.to_dict(),
             "clock": [args.per_move, args.bank], "policies": [args.max_retries,
                                                                args.max_strikes]}
    fp = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
    return MatchPlan(spec, tuple(names), args.games, sprt, fp, _sandbox(args, list(argv)))


def _split(command: str, flag: str) -> list[str]:
    try:
        parts = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"{flag}: {e}") from None
    if not parts:
        raise UsageError(f"{flag}: an empty command")
    return parts


def _rules(path: str | None) -> RuleSet:
    if not path:
        return RuleSet()
    try:
        return RuleSet.from_file(path)
    except (OSError, RuleSetError) as e:
        raise UsageError(f"--rules {path}: {e}") from None


def _sandbox(args: argparse.Namespace, names: list[str]) -> SandboxPlan:
    if not args.sandbox:
        if args.limit:
            raise UsageError("--limit goes with --sandbox")
        return SandboxPlan()
    folder = Path(args.sandbox).resolve()
    if not folder.is_dir():
        raise UsageError(f"--sandbox: {folder} is not a folder")
    try:
        limits = Limits.from_pairs(args.limit)
    except LimitError as e:
        raise UsageError(str(e)) from None
    return SandboxPlan(True, limits, (), {n: BotPlan(True, folder, limits) for n in names})


def cmd_match(args: argparse.Namespace) -> int:
    try:
        plan = plan_of(args)
    except UsageError as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}")
        return 2
    use_loop("auto")
    return asyncio.run(run_match(plan, args))


async def run_match(plan: MatchPlan, args: argparse.Namespace) -> int:
    configure(args.log_level, "auto")
    raise_nofile()
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        store = open_store(str(out / "match.sqlite3"), exclusive=True)
    except (OSError, StoreError) as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}")
        return 2
    launcher = Launcher(Output(out / "logs"), base=Path.cwd(), runtime=plan.sandbox.runtime,
                        events=Shown(console))
    try:
        return await _run_on(store, plan, out, args, launcher)
    except UsageError as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}")
        return 2
    finally:
        launcher.close()
        store.close()


def _find(store: Store, plan: MatchPlan) -> TournamentRow | None:
    """The match of these settings in ``store``, or None if it holds none; UsageError
    if it holds another match."""
    rows = [r for r in store.tournaments() if isinstance(r.spec.get("_match"), dict)]
    mine = [r for r in rows if r.spec["_match"].get("fingerprint") == plan.fingerprint]
    if rows and not mine:
        raise UsageError(f"{store.target} holds a match of other settings (commands, games, "
                         "seed, --sprt, rules or clock): give another --out to start this one")
    return mine[0] if mine else None


def _declare(store: Store, plan: MatchPlan, tokens: TokenBook) -> str:
    """Store the match (its schedule of pairs) and register its bots; its id."""
    tid = f"m-{plan.fingerprint[:10]}"
    spec = plan.spec.with_seed()
    stored = spec.to_dict(with_secrets=True)
    for p in stored["participants"]:
        p.pop("token", None)
    stored["_match"] = plan.settings()
    store.create_tournament(TournamentRow(tid, "match", stored, TournamentStatus.SCHEDULED,
                                          time.time()),
                            match_schedule(tid, plan.opponents, plan.pairs))
    return tid


def _tokens(store: Store, spec: TournamentSpec, tokens: TokenBook) -> dict[str, str]:
    """A fresh token for each bot of this run (the old ones die with their processes)."""
    out: dict[str, str] = {}
    known = dict(store.bots())
    for p in spec.participants:
        tok = new_token()
        if p.name in known:
            store.set_bot_token(p.name, digest(tok))
        else:
            store.add_bot(p.name, digest(tok))
        tokens.add(p.name, tok)
        out[p.name] = tok
    return out


def _tally(store: Store, tid: str, opponents: tuple[str, ...]) -> Tally:
    """The finished games stored so far."""
    tally = Tally(opponents)
    after = 0
    while page := store.finished_scores(tid, after, 2000):
        for row in page:
            tally.add_row(row)
        after = page[-1].seq
    return tally


async def _run_on(store: Store, plan: MatchPlan, out: Path, args: argparse.Namespace,
                  launcher: Launcher) -> int:
    row = _find(store, plan)
    tokens = TokenBook()
    tid = row.id if row is not None else _declare(store, plan, tokens)
    row = store.tournament(tid)
    assert row is not None
    spec = declared(row.spec)
    tally = _tally(store, tid, plan.opponents)
    if row.status is TournamentStatus.FINISHED:
        console.print(f"this match is finished: its summary is in {out}/")
        outcome = Outcome.of(row.spec.get("_match_end", {}))
        write_outputs(store, tid, out, plan.opponents, plan.sprt, tally, outcome)
        return exit_code(outcome)
    done = sum(s.pentanomial.pairs for s in tally.sides.values())
    if done:
        console.print(f"resuming: {done} pairs already played")
    try:
        launcher.prepare({p.name: plan.sandbox.of(p.name) for p in spec.participants
                          if p.command})
    except SandboxUnavailable as e:
        raise UsageError(str(e)) from None
    config = RefereeConfig(time_control=spec.time_control, policies=spec.policies)
    referee = Referee(config)
    director = Director(referee, store, tokens)
    bot_tokens = _tokens(store, spec, tokens)
    server = await start_server("127.0.0.1:0", config, tokens, referee=referee,
                                unix=launcher.socket)
    launcher.dismissed = director.remaining.dismissed
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    progress = MatchProgress(plan.opponents, plan.pairs, plan.sprt, args.quiet)
    end: Outcome | None = None
    try:
        n, k, conc = len(spec.participants), spec.table_size, spec.concurrency
        await launcher.start(server.target, [
            launcher.declared(p.name, p.command, bot_tokens[p.name], plan.sandbox.of(p.name),
                              instances(p.instances, concurrency=conc, bots=n, table_size=k))
            for p in spec.participants if p.command])
        await referee.lobby.wait_all(launcher.alive(), spec.connect_wait)
        end = await _play(director, tid, plan, tally, stop, progress)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await launcher.stop(dismissed=end is not None and end.complete)
        await server.stop(grace=1.0)
    if end is None:
        console.print("interrupted: run the same command again to resume")
        write_outputs(store, tid, out, plan.opponents, plan.sprt, tally, None)
        return 130
    fresh = store.tournament(tid)
    if fresh is not None:
        fresh.spec["_match_end"] = end.to_dict()
        store.set_tournament_spec(tid, fresh.spec)
        store.set_tournament_status(tid, TournamentStatus.FINISHED)
    write_outputs(store, tid, out, plan.opponents, plan.sprt, tally, end)
    return exit_code(end)


async def _play(director: Director, tid: str, plan: MatchPlan, tally: Tally,
                stop: asyncio.Event, progress: MatchProgress) -> Outcome | None:
    """Play until every game is played, the SPRT decides, or ``stop`` (then None)."""
    decided = _decided(plan, tally)
    if decided is not None:
        return decided
    games = {g.id: g for g in match_schedule(tid, plan.opponents, plan.pairs)}
    verdicts: list[Outcome] = []
    found = asyncio.Event()

    async def follow() -> None:
        """Each game's end, as the director tells it: counted, and the test asked."""
        async for ev in director.events.watch(tid):
            g = games.get(ev.game_id)
            if ev.result is None or g is None:
                continue
            if tally.add(g.id, g.players, g.deal_id, ev.result):
                progress.update(tally)
                verdict = _decided(plan, tally)
                if verdict is not None:
                    verdicts.append(verdict)
                    found.set()
                    return

    await director.set_status(tid, TournamentStatus.RUNNING)
    started = time.monotonic()
    follower = asyncio.ensure_future(follow())  # listening before the first game starts
    task = asyncio.ensure_future(director.run(tid, force_start=True))
    waits = {task, asyncio.ensure_future(stop.wait()), asyncio.ensure_future(found.wait())}
    try:
        with progress:
            progress.update(tally)
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if task.done():  # every game played: the last events, then the store, counted
                await asyncio.wait({follower}, timeout=5.0)
    finally:
        for w in waits - {task}:
            w.cancel()
        if not task.done():  # decided, or interrupted: the games in flight stop unrecorded
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await director.rows.write(director.store.void_running, tid)
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower
    if verdicts:
        return dataclasses.replace(verdicts[0], seconds=time.monotonic() - started)
    if stop.is_set():
        return None
    await task  # (raises what the run raised)
    for row in director.store.finished_scores(tid, 0, MAX_GAMES):
        tally.add_row(row)
    decided = _decided(plan, tally)
    return decided or Outcome.limit(plan.sprt, tally, time.monotonic() - started)


def _decided(plan: MatchPlan, tally: Tally) -> Outcome | None:
    """The SPRT's verdict if it has one."""
    if plan.sprt is None:
        return None
    side = tally.sides[plan.opponents[0]]
    llr = plan.sprt.llr(side.pentanomial)
    verdict = plan.sprt.verdict(llr)
    if verdict is Verdict.CONTINUE:
        return None
    return Outcome(verdict, llr, complete=False)

