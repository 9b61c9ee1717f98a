"""Tournaments end to end: real servers, real bot processes, real SQLite files.

* ``chinchon tournament run`` on a TOML file with Python and Node bots;
* a bot that never connects, and one that crashes, forfeit and the tournament ends;
* ``chinchon serve`` killed with SIGKILL mid-tournament, restarted, and resumed with no
  game lost or played twice; the admin API (create, watch, standings, export, list,
  cancel) and its authentication.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.engine import RuleSet, ShuffleSource, new_game, parse_card, replay
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import record_pb2
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import duration
from chinchon_referee.admin import add_admin_service
from chinchon_referee.auth import TokenBook
from chinchon_referee.config import Policies
from chinchon_referee.director import Director, TournamentEvent
from chinchon_referee.referee import GameSpec, Referee, Seat
from chinchon_referee.server import RunningServer, start_server
from chinchon_referee.standings import compute, summarize_game
from chinchon_referee.storage import SqliteStore
from chinchon_referee.tournament import TournamentSpec
from google.protobuf import json_format

from tests.helpers import ADMIN, NODE_BOT, ROOT, BotProc, bot_token, sdk_bot, spawn, spec, start, stop
from tests.test_reconnect import Bot

CLI = [sys.executable, "-m", "chinchon_referee.cli"]
PLAYED = ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
FORFEITED_ABSENT = ("TERMINATION_FORFEIT_NO_SHOW", "TERMINATION_FORFEIT_DISCONNECT")


def run(coro):
    return asyncio.run(coro)


def strict_record(rec: dict[str, Any]) -> record_pb2.GameRecord:
    """The record parses as a chinchon.v1.GameRecord with no unknown field."""
    return json_format.ParseDict(rec, record_pb2.GameRecord(), ignore_unknown_fields=False)


def check_record(rec: dict[str, Any]) -> None:
    msg = strict_record(rec)
    assert msg.game_id == rec["gameId"]
    if rec["result"]["termination"] in PLAYED:
        rep = replay(rec)
        assert rep.state.is_over
        assert list(rep.state.result.winners) == rec["result"]["winners"]
    else:
        replay(rec)  # forfeits replay up to the forfeit


def spec_dict(name: str, bots: list[str], **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": name,
        "participants": [{"name": b, "token": bot_token(b)} for b in bots],
        "games_per_pairing": 2,
        "concurrency": 2,
        "seed": f"seed-{name}",
        "rules": {"score_limit": 60},
        "time_control": {"per_move": 1.0, "bank": 5.0},
        "policies": {"reconnect_grace": 1.0},
    }
    d.update(extra)
    return d


class InProcess:
    """A real referee server on port 0 with a Director over a real SQLite file."""

    def __init__(self, server: RunningServer, store: SqliteStore, director: Director) -> None:
        self.server, self.store, self.director = server, store, director
        self.events: list[TournamentEvent] = []
        self._watch: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, tmp_path: Path) -> InProcess:
        tokens = TokenBook(ADMIN)
        server = await start_server("127.0.0.1:0", None, tokens)
        store = SqliteStore(str(tmp_path / "tournament.sqlite3"))
        return cls(server, store, Director(server.referee, store, tokens))

    def watch(self, tid: str) -> None:
        async def collect() -> None:
            async for ev in self.director.watch(tid):
                self.events.append(ev)

        self._watch = asyncio.ensure_future(collect())

    async def watched(self, timeout: float = 10) -> None:
        assert self._watch is not None
        await asyncio.wait_for(self._watch, timeout)

    async def close(self) -> None:
        if self._watch is not None and not self._watch.done():
            self._watch.cancel()
        await self.server.stop(0)
        await self.director.settle(5.0)  # nothing is written to the store after it closes
        self.store.close()

    @classmethod
    def run(cls, tmp_path: Path, body: Any) -> None:
        """Run ``body(env)`` with a fresh environment, closed whatever happens."""

        async def main() -> None:
            env = await cls.start(tmp_path)
            try:
                await body(env)
            finally:
                await env.close()

        asyncio.run(main())

    def ended(self) -> Counter[str]:
        """Game ids of the 'game ended' events, with how often each came."""
        return Counter(e.game_id for e in self.events if e.result is not None)


# -- a: the CLI, Python and Node bots ------------------------------------------------------


def test_tournament_run_cli_with_python_and_node_bots(tmp_path: Path) -> None:
    toml = tmp_path / "cup.toml"
    toml.write_text(f"""
name = "Small cup"
table_size = 2
games_per_pairing = 2
duplicate_deals = true
concurrency = 2
start = "when_connected"
seed = "cup-seed"

[rules]
score_limit = 60

[time_control]
per_move = 2.0
bank = 10.0

[policies]
reconnect_grace = 5.0

[[participants]]
name = "greedy-py"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]

[[participants]]
name = "random-py"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "random"]

[[participants]]
name = "node"
command = ["node", {json.dumps(str(NODE_BOT))}]
""", encoding="utf-8")
    assert (NODE_BOT.parent / "node_modules").is_dir()
    results = tmp_path / "results"
    db = tmp_path / "cup.sqlite3"
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--db", str(db),
         "--quiet"],
        capture_output=True, text=True, timeout=150, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # Launching bots prints nothing of gRPC's own (no fork-handler chatter).
    assert "fork_posix" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    bots = ["greedy-py", "random-py", "node"]
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert sorted(r["bot"] for r in st["rows"]) == sorted(bots)
    assert st["games"] == 6 and st["rating_model"] == "bradley-terry"
    for r in st["rows"]:
        assert r["games"] == 4, r
        assert r["wins"] + r["draws"] + r["losses"] == 4
        assert r["forfeits"] == 0 and r["timeouts"] == 0 and r["illegal_actions"] == 0, r
    assert sum(r["match_points"] for r in st["rows"]) == 6
    csv_lines = (results / "standings.csv").read_text(encoding="utf-8").strip().splitlines()
    assert len(csv_lines) == 4 and csv_lines[0].startswith("rank,bot,")
    assert {line.split(",")[1] for line in csv_lines[1:]} == set(bots)
    report = (results / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Small cup") and "ratings.svg" in report
    assert all(f"| {b} |" in report for b in bots)
    svg = ET.parse(results / "ratings.svg").getroot()
    assert svg.tag.endswith("svg")
    assert sum(1 for el in svg.iter() if el.tag.endswith("circle")) == 3
    records = sorted((results / "records").glob("*.json"))
    assert len(records) == 6
    pairs: Counter[frozenset[str]] = Counter()
    deals: dict[str, list[dict[str, Any]]] = {}
    for p in records:
        rec = json.loads(p.read_text(encoding="utf-8"))
        assert p.stem == rec["gameId"]
        assert rec["result"]["termination"] in PLAYED, rec["result"]
        check_record(rec)
        names = [s["name"] for s in rec["seats"]]
        pairs[frozenset(names)] += 1
        deal = rec["actions"][0]["deal"]
        ranks = [parse_card(c).rank for c in deal["deck"]]
        deals.setdefault(json.dumps([ranks, deal["starter"]]), []).append(rec)
    assert set(pairs.values()) == {2} and len(pairs) == 3
    # Duplicate deals: the two games of each pairing start from the same deal, seats
    # swapped, each under its own suit names (the same ranks, never the same cards).
    assert len(deals) == 3
    for games in deals.values():
        seatings = [[s["name"] for s in rec["seats"]] for rec in games]
        assert len(games) == 2 and seatings[0] == seatings[1][::-1]
        first, second = (rec["actions"][0]["deal"]["deck"] for rec in games)
        assert first != second
    # The database holds the same finished games; the same file run again resumes it.
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT status, voided FROM games").fetchall()
        (status,) = con.execute("SELECT status FROM tournaments").fetchone()
    finally:
        con.close()
    assert status == "finished" and rows == [("finished", 0)] * 6
    assert (results / "logs").is_dir()


def test_tournament_run_waits_for_bots_that_are_slow_to_start(tmp_path: Path) -> None:
    """start = "when_connected": a launched bot slower to start than the reconnect grace
    is waited for instead of forfeiting its first games."""
    slow = ROOT / "tests" / "bots" / "slow_start_bot.py"
    toml = tmp_path / "slow.toml"
    toml.write_text(f"""
name = "Slow start"
games_per_pairing = 2
concurrency = 1
seed = "slow"
[rules]
score_limit = 30
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 0.5
[[participants]]
name = "quick"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]
[[participants]]
name = "sleepy"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "3", "--bot", "greedy"]
""", encoding="utf-8")
    results = tmp_path / "results"
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 2
    for r in st["rows"]:
        assert (r["games"], r["forfeits"]) == (2, 0), r
    for p in (results / "records").glob("*.json"):
        rec = json.loads(p.read_text(encoding="utf-8"))
        assert rec["result"]["termination"] in PLAYED, rec["result"]
    assert (results / "tournament.sqlite3").is_file()


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        return [int(x) for x in f.read().split()]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has exited


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_ctrl_c_while_waiting_for_bots_stops_them_and_exits(tmp_path: Path) -> None:
    """SIGINT while ``tournament run`` waits for its bots to connect: the bots it launched
    are stopped, and it exits with 130 saying how to resume."""
    slow = ROOT / "tests" / "bots" / "slow_start_bot.py"
    toml = tmp_path / "wait.toml"
    toml.write_text(f"""
name = "Interrupted"
games_per_pairing = 2
concurrency = 1
seed = "wait"
[[participants]]
name = "sleepy1"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "120", "--bot", "greedy"]
[[participants]]
name = "sleepy2"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "120", "--bot", "greedy"]
""", encoding="utf-8")
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        bots: list[int] = []
        deadline = time.monotonic() + 60
        while len(bots) < 2 and time.monotonic() < deadline:  # both launched, still asleep
            time.sleep(0.2)
            bots = _children(proc.pid)
        assert len(bots) == 2, "the CLI did not launch its two bots"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:] + err[-3000:]
    assert "interrupted before the first game" in out, out[-3000:]
    assert "Traceback" not in err, err[-3000:]
    deadline = time.monotonic() + 10
    while any(_running(b) for b in bots) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(b) for b in bots), "a launched bot outlived the CLI"


# -- b: a bot that never connects ----------------------------------------------------------


def test_a_bot_that_never_connects_forfeits_every_game(tmp_path: Path) -> None:
    grace = 1.0

    async def main(env: InProcess) -> None:
        # absence_limit 0: once the ghost missed a game, its other games forfeit at once.
        spec = TournamentSpec.from_dict(spec_dict(
            "no-show", ["a", "b", "ghost"],
            policies={"reconnect_grace": grace, "absence_limit": 0.0}))
        tid, parts = env.director.create(spec)
        assert [p.token for p in parts] == [bot_token("a"), bot_token("b"), bot_token("ghost")]
        procs = [await spawn(sdk_bot("greedy"), env.server, "a"),
                 await spawn(sdk_bot("random"), env.server, "b")]
        try:
            assert await env.server.referee.lobby.wait_all(["a", "b"], 20)
            env.watch(tid)
            t0 = time.monotonic()
            await asyncio.wait_for(env.director.run(tid), 90)
            elapsed = time.monotonic() - t0
            await env.watched()
        finally:
            await stop(*procs)
        games = env.store.games(tid)
        assert env.store.tournament(tid).status == "finished"
        assert len(games) == 6 and all(x.status == "finished" and x.voided == 0 for x in games)
        assert env.ended() == Counter({x.id: 1 for x in games})
        ghost_games = [x for x in games if "ghost" in x.players]
        assert len(ghost_games) == 4
        for x in games:
            res = x.record["result"]
            check_record(x.record)
            if "ghost" in x.players:
                seat = x.players.index("ghost")
                assert res["termination"] == "TERMINATION_FORFEIT_NO_SHOW", res
                assert res.get("forfeitedSeat", 0) == seat
                assert res["winners"] == [1 - seat]
                assert "ghost" in res["summary"]
            else:
                assert res["termination"] in PLAYED, res
                assert all(s["decisions"] > 0 for s in x.stats)
        # The tournament waited the grace once; the later games forfeited at once.
        started = {e.game_id: e.time for e in env.events if e.game_id and e.result is None}
        ended = {e.game_id: e.time for e in env.events if e.result is not None}
        # The ghost's games were postponed: the a-b games were played first.
        assert max(ended[x.id] for x in games if "ghost" not in x.players) <= min(
            started[x.id] for x in ghost_games)
        waits = sorted(ended[x.id] - started[x.id] for x in ghost_games)
        assert waits[-1] >= grace * 0.9, waits
        assert all(w < grace * 0.5 for w in waits[:-1]), waits
        assert elapsed < 60
        st = env.director.standings(tid)
        ghost = next(r for r in st.rows if r.bot == "ghost")
        assert (ghost.games, ghost.forfeits, ghost.losses, ghost.match_points) == (4, 4, 4, 0)
        assert st.rows[-1].bot == "ghost"
        for r in st.rows:
            if r.bot != "ghost":
                assert r.games == 4 and r.forfeits == 0 and r.wins >= 2
        assert st.games == 6
        # Forfeits are not card luck: only the a-b deal counts, too little to measure.
        assert st.duplicate_variance_reduction is None

    InProcess.run(tmp_path, main)


def test_an_absent_bot_forfeits_its_remaining_games_at_once_after_the_absence_limit(
    tmp_path: Path,
) -> None:
    """Below the organizer's absence limit, each game of a missing bot that comes due
    (nothing else left to play) waits the grace alone; past the limit, counted from its
    first no-show, the rest forfeit at once."""
    grace, limit = 1.0, 2.5

    async def main(env: InProcess) -> None:
        spec = TournamentSpec.from_dict(spec_dict(
            "limit", ["a", "b", "ghost"], games_per_pairing=6,
            policies={"reconnect_grace": grace, "absence_limit": limit}))
        tid, _ = env.director.create(spec)
        procs = [await spawn(sdk_bot("greedy"), env.server, "a"),
                 await spawn(sdk_bot("random"), env.server, "b")]
        try:
            assert await env.server.referee.lobby.wait_all(["a", "b"], 20)
            env.watch(tid)
            await asyncio.wait_for(env.director.run(tid), 120)
            await env.watched()
        finally:
            await stop(*procs)
        games = env.store.games(tid)
        ghost = [x for x in games if "ghost" in x.players]
        assert len(ghost) == 12
        assert all(x.record["result"]["termination"] == "TERMINATION_FORFEIT_NO_SHOW"
                   for x in ghost)
        started = {e.game_id: e.time for e in env.events if e.game_id and e.result is None}
        ended = {e.game_id: e.time for e in env.events if e.result is not None}
        order = sorted(ghost, key=lambda x: started[x.id])
        waited = [ended[x.id] - started[x.id] >= grace * 0.9 for x in order]
        n = waited.index(False)  # the first game forfeited at once
        # Waited one at a time first (more than the first no-show alone), then none.
        assert 2 <= n <= 1 + math.ceil(limit / (grace * 0.9)), waited
        assert not any(waited[n:]), waited
        first_no_show = ended[order[0].id]
        assert started[order[n].id] - first_no_show >= limit * 0.9

    InProcess.run(tmp_path, main)


# -- an internal error of the referee ------------------------------------------------------


def _referee_fails(monkeypatch: pytest.MonkeyPatch, game_id: str, times: int) -> list[str]:
    """Make the referee hit an internal error (a RuntimeError inside the game loop) at
    the 20th turn of ``game_id``, in its first ``times`` attempts, through the referees'
    fault-injection hook (``Referee.fault_hook``). Returns the log of the failures, one
    entry per failed attempt."""
    failed: list[str] = []
    turns: Counter[int] = Counter()  # remote turns per attempt

    def fault(spec: GameSpec, seat: Seat) -> None:
        if spec.game_id == game_id and len(failed) < times:
            turns[len(failed)] += 1
            if turns[len(failed)] == 20:
                failed.append(game_id)
                raise RuntimeError("injected fault")

    monkeypatch.setattr(Referee, "fault_hook", fault)
    return failed


def test_the_bots_of_a_game_stopped_by_an_internal_error_hear_it_and_play_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both bots of a game that the referee's internal error stops get a game_ended with
    TERMINATION_ABORTED and the reason; their streams go back to the lobby and play the
    next game normally."""
    async def main() -> None:
        server = await start(["a", "b"])
        failed = _referee_fails(monkeypatch, "faulty", 1)
        a, b = Bot(server.target, "a"), Bot(server.target, "b")
        try:
            await a.back()
            await b.back()
            for game_id in ("faulty", "after"):
                s = spec(game_id, ["a", "b"], policies=Policies(reconnect_grace=5.0))
                game = asyncio.ensure_future(server.referee.play(s))
                ended = await asyncio.gather(a.play_on(), b.play_on())
                out = await asyncio.wait_for(game, 30)
                for seat, msg in enumerate(ended):
                    got = msg.game_ended
                    assert got.game_id == game_id
                    assert g.Termination.Name(got.result.termination) == out.termination
                    assert got.seat == seat
                    if game_id == "faulty":
                        assert got.result.termination == g.TERMINATION_ABORTED
                        assert got.result.summary == "the referee hit an internal error"
                    else:
                        assert got.result.termination in (g.TERMINATION_NORMAL,
                                                          g.TERMINATION_CHINCHON)
            assert failed == ["faulty"]
        finally:
            await a.drop()
            await b.drop()
            await server.stop(0)

    asyncio.run(main())


@pytest.mark.parametrize("failures", [1, 2])
def test_a_game_stopped_by_an_internal_error_is_played_again_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int,
) -> None:
    """The referee hits an internal error in the middle of a tournament game (not the
    bots' fault). Its bots hear that the game ended ABORTED; the game is played once
    more from the same deal, and counts. If it fails again it is recorded as ABORTED and
    left out of the standings, and the tournament goes on to its end either way."""

    async def main(env: InProcess) -> None:
        spec = TournamentSpec.from_dict(spec_dict("faulty", ["a", "b"], games_per_pairing=4,
                                                  concurrency=1))
        tid, _ = env.director.create(spec)
        victim = env.store.games(tid)[1].id
        failed = _referee_fails(monkeypatch, victim, failures)
        procs = {b: await spawn(sdk_bot("greedy"), env.server, b) for b in ("a", "b")}
        try:
            assert await env.server.referee.lobby.wait_all(["a", "b"], 20)
            env.watch(tid)
            await asyncio.wait_for(env.director.run(tid), 90)
            await env.watched()
        finally:
            await stop(*procs.values())
        assert failed == [victim] * failures
        games = {x.id: x for x in env.store.games(tid)}
        assert len(games) == 4 and all(x.status == "finished" for x in games.values())
        bad = games.pop(victim)
        assert bad.voided == 1  # set back to scheduled once, after the first failure
        for x in games.values():
            assert x.voided == 0 and x.result["termination"] in PLAYED
        replays = [e for e in env.events if e.game_id == victim and "played again" in e.message]
        assert len(replays) == 1
        assert replays[0].message == (f"game {victim} was stopped by an internal error of the "
                                      "referee: it will be played again from the same deal")
        # The referee noted each failure (what the bots hear of it is checked above, with
        # raw clients).
        aborted = [i for i in env.server.referee.incidents if i["kind"] == "aborted"]
        assert [i["game_id"] for i in aborted] == [victim] * failures
        assert aborted[0]["message"] == "the referee hit an internal error"
        st = env.director.standings(tid)
        if failures == 1:
            assert bad.result["termination"] in PLAYED
            check_record(bad.record)
            assert st.games == 4
        else:
            assert bad.result["termination"] == "TERMINATION_ABORTED"
            assert bad.result["summary"] == "the referee hit an internal error"
            assert st.games == 3  # the aborted game does not count
        assert env.events[-1].message == "tournament finished"

    InProcess.run(tmp_path, main)


# -- c: a bot that crashes mid-tournament --------------------------------------------------


def test_a_bot_that_crashes_forfeits_its_remaining_games(tmp_path: Path) -> None:
    async def main(env: InProcess) -> None:
        bots = ["a", "b", "d", "crash"]
        spec = TournamentSpec.from_dict(spec_dict("crash", bots))
        tid, _ = env.director.create(spec)
        players = {x.id: x.players for x in env.store.games(tid)}
        procs = {b: await spawn(sdk_bot("greedy" if b != "b" else "random"), env.server, b)
                 for b in bots}
        killed_after: list[str] = []

        async def killer() -> None:
            async for ev in env.director.watch(tid):
                if ev.result is not None and "crash" in players[ev.game_id] and not killed_after:
                    procs["crash"].proc.send_signal(signal.SIGKILL)
                    killed_after.append(ev.game_id)

        try:
            assert await env.server.referee.lobby.wait_all(bots, 20)
            env.watch(tid)
            kill_task = asyncio.ensure_future(killer())
            await asyncio.wait_for(env.director.run(tid), 90)
            await env.watched()
            await asyncio.wait_for(kill_task, 5)
            assert await asyncio.wait_for(procs["crash"].proc.wait(), 5) == -signal.SIGKILL
        finally:
            await stop(*procs.values())
        games = env.store.games(tid)
        assert len(games) == len(Director.schedule(spec.with_seed(), tid)) == 12
        assert [x.seq for x in games] == list(range(12))
        assert all(x.status == "finished" and x.voided == 0 for x in games)
        # Every scheduled game ended exactly once.
        assert env.ended() == Counter({x.id: 1 for x in games})
        assert env.events[-1].message == "tournament finished"
        assert env.events[-1].games_done == env.events[-1].games_total == 12
        first = killed_after[0]
        for x in games:
            res = x.record["result"]
            check_record(x.record)
            if "crash" not in x.players or x.id == first:
                assert res["termination"] in PLAYED, (x.id, res)
            else:
                seat = x.players.index("crash")
                assert res["termination"] in FORFEITED_ABSENT, (x.id, res)
                assert res.get("forfeitedSeat", 0) == seat and res["winners"] == [1 - seat]
        st = env.director.standings(tid)
        crash = next(r for r in st.rows if r.bot == "crash")
        assert crash.games == 6 and crash.forfeits == 5
        assert sum(r.games for r in st.rows) == 24

    InProcess.run(tmp_path, main)


def test_a_bot_back_after_the_grace_loses_only_the_games_due_while_nothing_else_could_be_played(
    tmp_path: Path,
) -> None:
    """A bot killed mid-tournament and restarted after longer than the grace: while it is
    away every other game is played; only a game that came due with nothing else to play
    forfeits (NO_SHOW, after the grace); once back it plays its postponed games."""
    grace = 5.0

    async def main(env: InProcess) -> None:
        bots = ["a", "b", "d", "crash"]
        spec = TournamentSpec.from_dict(spec_dict(
            "absent", bots, policies={"reconnect_grace": grace, "absence_limit": 600.0}))
        tid, _ = env.director.create(spec)
        players = {x.id: x.players for x in env.store.games(tid)}
        procs = {b: await spawn(sdk_bot("greedy"), env.server, b) for b in bots}
        # The restarted bot: started now, connects when the test lets it (a line on stdin).
        gated = BotProc(await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "tests" / "bots" / "gated_bot.py"), "--bot", "greedy",
            "--target", env.server.target, "--token", bot_token("crash"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED="1")))
        killed_after: list[str] = []
        released: list[str] = []

        async def killer() -> None:
            async for ev in env.director.watch(tid):
                if ev.result is None or "crash" not in players[ev.game_id]:
                    continue
                if not killed_after:
                    procs["crash"].proc.send_signal(signal.SIGKILL)
                    killed_after.append(ev.game_id)
                elif ev.result["termination"] == "TERMINATION_FORFEIT_NO_SHOW" and not released:
                    # Away for longer than the grace: come back now.
                    assert gated.proc.stdin is not None
                    gated.proc.stdin.write(b"go\n")
                    await gated.proc.stdin.drain()
                    released.append(ev.game_id)

        try:
            assert await env.server.referee.lobby.wait_all(bots, 20)
            env.watch(tid)
            kill_task = asyncio.ensure_future(killer())
            await asyncio.wait_for(env.director.run(tid), 150)
            await env.watched()
            await asyncio.wait_for(kill_task, 5)
        finally:
            await stop(*procs.values(), gated)
        assert killed_after and released
        games = env.store.games(tid)
        assert len(games) == 12 and all(x.status == "finished" and x.voided == 0 for x in games)
        assert env.ended() == Counter({x.id: 1 for x in games})
        started = {e.game_id: e.time for e in env.events if e.game_id and e.result is None}
        ended = {e.game_id: e.time for e in env.events if e.result is not None}
        term = {x.id: x.record["result"]["termination"] for x in games}
        others = [x.id for x in games if "crash" not in x.players]
        mine = [x.id for x in games if "crash" in x.players]
        assert all(term[i] in PLAYED for i in others), term
        assert term[killed_after[0]] in PLAYED
        no_shows = [i for i in mine if term[i] == "TERMINATION_FORFEIT_NO_SHOW"]
        dropped = [i for i in mine if term[i] == "TERMINATION_FORFEIT_DISCONNECT"]
        # At most the game it was seated in when killed is lost by disconnection.
        assert len(dropped) <= 1
        # Each no-show came due when nothing else was left to play: after every other game
        # (postponed, not forfeited at once), and it waited the grace.
        assert 1 <= len(no_shows) <= 2, term  # a second one only if the restart is slow
        last_other = max(ended[i] for i in others + dropped)
        for i in no_shows:
            assert started[i] >= last_other - 0.01, (i, started[i], last_other)
            assert ended[i] - started[i] >= grace * 0.9
        # Back: its postponed games were played, not forfeited.
        after = [i for i in mine if started[i] > ended[released[0]]]
        played_after = [i for i in after if term[i] in PLAYED]
        assert len(played_after) >= 2 and len(played_after) == len(after) - (len(no_shows) - 1)
        st = env.director.standings(tid)
        crash = next(r for r in st.rows if r.bot == "crash")
        assert crash.forfeits == len(no_shows) + len(dropped)

    InProcess.run(tmp_path, main)


# -- cancel and watch (in process) ---------------------------------------------------------


def test_cancel_stops_games_in_flight_and_ends_watchers(tmp_path: Path) -> None:
    async def main(env: InProcess) -> None:
        spec = TournamentSpec.from_dict(spec_dict("cancel", ["a", "b"], games_per_pairing=20,
                                                  concurrency=1, rules={}))
        tid, _ = env.director.create(spec)
        procs = [await spawn(sdk_bot("greedy"), env.server, "a"),
                 await spawn(sdk_bot("greedy"), env.server, "b")]
        try:
            assert await env.server.referee.lobby.wait_all(["a", "b"], 20)
            env.watch(tid)
            env.director.start(tid)
            deadline = time.monotonic() + 60
            while True:
                gs = env.store.games(tid)
                if any(x.status == "finished" for x in gs) and any(
                        x.status == "running" for x in gs):
                    break
                assert time.monotonic() < deadline, "no game finished with another running"
                await asyncio.sleep(0.005)
            # A late watcher that takes the first event just as the tournament ends.
            late = env.director.watch(tid)
            first = await late.__anext__()
            assert first.message == "tournament is running"
            await env.director.cancel(tid)

            async def drain() -> list[TournamentEvent]:
                return [ev async for ev in late]

            rest = await asyncio.wait_for(drain(), 5)
            assert rest[-1].message == "tournament cancelled"
            assert all(ev.result is not None for ev in rest[:-1])  # at most a game that ended
            at_cancel = {x.id: (x.status, x.voided) for x in env.store.games(tid)}
            await env.watched(5)
            assert env.events[-1].message == "tournament cancelled"
            assert env.events[-1].status == "cancelled"
            # Nothing is played or recorded for a cancelled tournament.
            await asyncio.sleep(2.0)
            after = {x.id: (x.status, x.voided) for x in env.store.games(tid)}
            assert after == at_cancel
            assert "running" not in {s for s, _ in after.values()}
            assert sum(v for _, v in after.values()) == 1  # the game in flight was voided
            assert env.server.referee.games_running == 0
            assert env.store.tournament(tid).status == "cancelled"
            done = [x for x in env.store.games(tid) if x.status == "finished"]
            assert env.ended() == Counter({x.id: 1 for x in done})
        finally:
            await stop(*procs)

    InProcess.run(tmp_path, main)


# -- d: kill -9 and resume through `chinchon serve` and the admin API ------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``chinchon serve`` as a child process; stdout and stderr go to files."""

    def __init__(self, tmp: Path, port: int, db: Path, n: int) -> None:
        self.out = tmp / f"serve{n}.out"
        self.err = tmp / f"serve{n}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(db),
                 "--admin-token", ADMIN, "--log-level", "warning"],
                stdout=out, stderr=err, env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        deadline = time.monotonic() + 30
        while True:
            lines = self.out.read_text(encoding="utf-8").splitlines()
            events = [json.loads(x) for x in lines if x.startswith("{")]
            listening = [e for e in events if e.get("event") == "listening"]
            if listening:
                assert listening[0]["port"] == port
                break
            assert self.proc.poll() is None, self.err.read_text(encoding="utf-8")[-3000:]
            assert time.monotonic() < deadline, "chinchon serve did not start"
            time.sleep(0.02)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(10) == -signal.SIGKILL

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def db_games(db: Path, tid: str) -> dict[str, dict[str, Any]]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT id, seq, players, deal_id, status, voided, record, stats FROM games "
            "WHERE tournament_id = ? ORDER BY seq", (tid,)).fetchall()
    finally:
        con.close()
    return {r[0]: {"seq": r[1], "players": json.loads(r[2]), "deal_id": r[3], "status": r[4],
                   "voided": r[5], "record": r[6], "stats": r[7]} for r in rows}


def launch_sdk_bots(tmp_path: Path, port: int, bots: dict[str, str],
                    streams: int = 1) -> list[subprocess.Popen[bytes]]:
    """``streams`` SDK bot processes per bot (name -> engine bot) against the referee on
    ``port``, each logging to ``tmp_path/NAME.I.log``."""
    procs = []
    for b, kind in bots.items():
        for i in range(streams):
            with open(tmp_path / f"{b}.{i}.log", "wb") as err:
                procs.append(subprocess.Popen(
                    [*sdk_bot(kind), "--target", f"127.0.0.1:{port}", "--token", bot_token(b)],
                    stdout=subprocess.DEVNULL, stderr=err,
                    env=dict(os.environ, PYTHONUNBUFFERED="1"),
                ))
    return procs


def wait_mid_tournament(db: Path, tid: str) -> None:
    """Wait until at least two games of ``tid`` are done and another is in flight."""
    deadline = time.monotonic() + 60
    while True:
        status = Counter(x["status"] for x in db_games(db, tid).values())
        if status["finished"] >= 2 and status["running"] >= 1:
            return
        assert time.monotonic() < deadline, f"no progress: {status}"
        time.sleep(0.01)


def admin_spec(name: str, bots: list[str], *, score_limit: int, reconnect_grace: float,
               games_per_pairing: int, concurrency: int, seed: str) -> tpb.TournamentSpec:
    """A 2-player round-robin for CreateTournament: tokens bot_token(NAME), a 1 s + 5 s clock,
    started when every bot is connected."""
    return tpb.TournamentSpec(
        name=name,
        participants=[tpb.Participant(name=b, token=bot_token(b)) for b in bots],
        rules=g.RuleSet(score_limit=score_limit),
        time_control=g.TimeControl(per_move=duration(1.0), bank=duration(5.0)),
        policies=g.Policies(reconnect_grace=duration(reconnect_grace)),
        table_size=2, games_per_pairing=games_per_pairing, start_when_connected=True,
        concurrency=concurrency, seed=seed,
    )


def stop_all(bot_procs: list[subprocess.Popen[bytes]], servers: list[Serve]) -> None:
    """Kill the bot processes and stop the servers (SIGTERM)."""
    for p in bot_procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    for s in servers:
        s.stop()


def test_kill_9_mid_tournament_then_resume(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "referee.sqlite3"
    admin = (("authorization", f"Bearer {ADMIN}"),)
    bots = {"ka": "greedy", "kb": "random", "kc": "greedy"}
    servers: list[Serve] = []
    bot_procs: list[subprocess.Popen[bytes]] = []
    try:
        servers.append(Serve(tmp_path, port, db, 1))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            spec = admin_spec("kill-9 cup", list(bots), score_limit=60, reconnect_grace=15.0,
                              games_per_pairing=6, concurrency=2, seed="kill-seed")
            created = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                            metadata=admin, timeout=10)
            tid = created.tournament.id
            assert created.tournament.games_total == 18
            assert [(p.name, p.token) for p in created.participants] == [
                (b, bot_token(b)) for b in bots]
            # A second tournament, started by hand only: it must survive the crash as is.
            other = stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
                name="manual cup", participants=[tpb.Participant(name="mx"),
                                                 tpb.Participant(name="my")],
                games_per_pairing=2)), metadata=admin, timeout=10)
            assert other.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
            assert all(p.token for p in other.participants)  # generated, shown once
        # Two streams per bot: two games at once.
        bot_procs += launch_sdk_bots(tmp_path, port, bots, streams=2)
        # Kill the referee when at least two games are done and others are in flight.
        wait_mid_tournament(db, tid)
        servers[0].kill9()
        before = db_games(db, tid)
        done_before = {k: v for k, v in before.items() if v["status"] == "finished"}
        running_before = {k for k, v in before.items() if v["status"] == "running"}
        assert len(done_before) >= 2
        assert all(v["voided"] == 0 for v in before.values())

        servers.append(Serve(tmp_path, port, db, 2))
        events: list[tpb.WatchTournamentResponse] = []
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)

            def watch() -> None:
                for ev in stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                               metadata=admin, timeout=120):
                    events.append(ev)

            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            listed = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=admin, timeout=10)
            by_id = {t.id: t for t in listed.tournaments}
            assert by_id[tid].status in (tpb.TOURNAMENT_STATUS_RUNNING,
                                         tpb.TOURNAMENT_STATUS_FINISHED)
            # The manual tournament was not started by the restart.
            assert by_id[other.tournament.id].status == tpb.TOURNAMENT_STATUS_SCHEDULED
            watcher.join(120)
            assert not watcher.is_alive(), "the tournament did not finish"
            info = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=admin, timeout=10)
            mine = next(t for t in info.tournaments if t.id == tid)
            assert mine.status == tpb.TOURNAMENT_STATUS_FINISHED
            assert (mine.games_total, mine.games_done) == (18, 18)

            after = db_games(db, tid)
            assert len(after) == 18 and all(v["status"] == "finished" for v in after.values())
            # Games finished before the kill are untouched, byte for byte.
            for k, v in done_before.items():
                assert after[k]["record"] == v["record"] and after[k]["stats"] == v["stats"]
                assert after[k]["voided"] == 0
            # Games in flight at the kill were voided and replayed; no other game was.
            for k, v in after.items():
                assert v["voided"] == (1 if k in running_before else 0), (k, v["voided"])
            # Every game after the restart ended once, none of those finished before.
            assert events[0].message.startswith("tournament is")
            first_done = events[0].tournament.games_done
            assert first_done >= len(done_before)
            ended = Counter(e.game_id for e in events if e.HasField("result"))
            assert all(n == 1 for n in ended.values()), ended
            assert not set(ended) & set(done_before)
            assert len(ended) == 18 - first_done
            assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
            assert events[-1].tournament.games_done == 18
            for e in events:
                if e.HasField("result"):
                    assert e.result.termination in (g.TERMINATION_NORMAL, g.TERMINATION_CHINCHON)
            # Every game was played to its end from its own deal (duplicate deals are
            # off by default), the one its seed and deal id give, replayed or not.
            deals: dict[str, set[str]] = {}
            for k, v in after.items():
                rec = json.loads(v["record"])
                assert rec["gameId"] == k and rec["result"]["termination"] in PLAYED
                check_record(rec)
                dealt = ShuffleSource("kill-seed", v["deal_id"]).chance(
                    new_game(RuleSet(score_limit=60)))
                assert rec["actions"][0]["deal"]["deck"] == [str(c) for c in dealt.deck]
                deals.setdefault(v["deal_id"], set()).add(json.dumps(rec["actions"][0]))
            assert len(deals) == 18 and all(len(s) == 1 for s in deals.values())

            # Standings over all 18 games.
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=admin,
                                   timeout=10)
            assert sorted(r.bot for r in st.rows) == sorted(bots)
            assert all(r.games == 12 for r in st.rows)
            assert sum(r.match_points for r in st.rows) == 18
            assert [r.rank for r in st.rows] == [1, 2, 3]
            assert all(r.forfeits == 0 for r in st.rows)
            h2h = {(h.bot, h.opponent): (h.score, h.games) for h in st.head_to_head}
            assert len(h2h) == 6 and all(n == 6 for _, n in h2h.values())
            local = compute(list(bots), [
                summarize_game(v["players"], json.loads(v["record"]), json.loads(v["stats"]),
                               v["deal_id"]) for v in after.values()])
            assert [(r.bot, r.match_points, r.hands_won) for r in local.rows] == [
                (r.bot, r.match_points, r.hands_won) for r in st.rows]

            # Export: every record, in schedule order, each a strict GameRecord.
            ex = stub.ExportResults(tpb.ExportResultsRequest(tournament_id=tid), metadata=admin,
                                    timeout=10)
            recs = [json.loads(x) for x in ex.records_json]
            assert [r["gameId"] for r in recs] == sorted(after, key=lambda k: after[k]["seq"])
            for r in recs:
                strict_record(r)
                assert r == json.loads(after[r["gameId"]]["record"])
            assert json.loads(ex.standings_json)["games"] == 18
            assert len(ex.standings_csv.strip().splitlines()) == 4
            assert ex.report_markdown.startswith("# kill-9 cup")

            # Cancel the other tournament.
            cancelled = stub.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=other.tournament.id), metadata=admin,
                timeout=10)
            assert cancelled.tournament.status == tpb.TOURNAMENT_STATUS_CANCELLED
            listed = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=admin, timeout=10)
            statuses = {t.id: t.status for t in listed.tournaments}
            assert statuses == {tid: tpb.TOURNAMENT_STATUS_FINISHED,
                                other.tournament.id: tpb.TOURNAMENT_STATUS_CANCELLED}
            assert [t.id for t in listed.tournaments] == [other.tournament.id, tid]  # newest first
            try:
                stub.StartTournament(tpb.StartTournamentRequest(tournament_id=other.tournament.id),
                                     metadata=admin, timeout=10)
                raise AssertionError("a cancelled tournament started")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        stop_all(bot_procs, servers)
    # The restarted referee shut down cleanly on SIGTERM.
    assert servers[-1].proc.returncode == 0, servers[-1].err.read_text(encoding="utf-8")[-3000:]


def test_sigterm_mid_tournament_then_resume(tmp_path: Path) -> None:
    """``chinchon serve`` stopped with SIGTERM in the middle of a tournament, with a short
    reconnect grace: it exits 0; no game is forfeited because of the shutdown (before,
    the game cut at the end of the grace became a disconnect forfeit, and each game left
    a no-show) and the tournament stays running. Started again on the same port and
    database, it resumes; the SDK bots, which retry a referee that is shutting down,
    come back by themselves, and every game is played to its end exactly once."""
    port = free_port()
    db = tmp_path / "referee.sqlite3"
    admin = (("authorization", f"Bearer {ADMIN}"),)
    servers: list[Serve] = []
    bot_procs: list[subprocess.Popen[bytes]] = []
    try:
        servers.append(Serve(tmp_path, port, db, 1))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            spec = admin_spec("sigterm cup", ["sa", "sb"], score_limit=40, reconnect_grace=0.5,
                              games_per_pairing=10, concurrency=1, seed="sigterm-seed")
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                        metadata=admin, timeout=10).tournament.id
        bot_procs += launch_sdk_bots(tmp_path, port, {"sa": "greedy", "sb": "greedy"})
        wait_mid_tournament(db, tid)
        servers[0].proc.send_signal(signal.SIGTERM)
        assert servers[0].proc.wait(20) == 0
        err = servers[0].err.read_text(encoding="utf-8")
        assert "Traceback" not in err and "never retrieved" not in err, err[-3000:]
        time.sleep(1.0)  # twice the reconnect grace: nothing is recorded after the exit
        stopped = db_games(db, tid)
        done = {k: v for k, v in stopped.items() if v["status"] == "finished"}
        assert 2 <= len(done) < 10
        for v in done.values():
            assert json.loads(v["record"])["result"]["termination"] in PLAYED
        con = sqlite3.connect(db)
        try:
            (t_status,) = con.execute("SELECT status FROM tournaments WHERE id = ?",
                                      (tid,)).fetchone()
        finally:
            con.close()
        assert t_status == "running"

        servers.append(Serve(tmp_path, port, db, 2))
        deadline = time.monotonic() + 120
        while True:
            after = db_games(db, tid)
            if all(v["status"] == "finished" for v in after.values()):
                break
            assert time.monotonic() < deadline, Counter(v["status"] for v in after.values())
            time.sleep(0.05)
        assert len(after) == 10
        for k, v in done.items():  # kept as they were
            assert after[k]["record"] == v["record"]
        for v in after.values():
            rec = json.loads(v["record"])
            assert rec["result"]["termination"] in PLAYED, rec["result"]
            check_record(rec)
    finally:
        stop_all(bot_procs, servers)
    assert servers[-1].proc.returncode == 0, servers[-1].err.read_text(encoding="utf-8")[-3000:]


# -- e: the admin API needs the admin token ------------------------------------------------


def test_admin_calls_need_the_admin_token(tmp_path: Path) -> None:
    async def main() -> None:
        tokens = TokenBook(ADMIN)
        tokens.add("bot", bot_token("bot"))
        store = SqliteStore(str(tmp_path / "admin.sqlite3"))
        server = await start_server(
            "127.0.0.1:0", None, tokens,
            add_services=lambda srv, ref, book: add_admin_service(srv, ref, book, store))
        try:
            async with grpc.aio.insecure_channel(server.target) as ch:
                stub = tpb_grpc.TournamentServiceStub(ch)
                spec = tpb.TournamentSpec(
                    name="auth cup", participants=[tpb.Participant(name="p1"),
                                                   tpb.Participant(name="p2")])
                calls = {
                    "CreateTournament": lambda md: stub.CreateTournament(
                        tpb.CreateTournamentRequest(spec=spec), metadata=md, timeout=10),
                    "ListTournaments": lambda md: stub.ListTournaments(
                        tpb.ListTournamentsRequest(), metadata=md, timeout=10),
                    "StartTournament": lambda md: stub.StartTournament(
                        tpb.StartTournamentRequest(tournament_id="t-x"), metadata=md, timeout=10),
                    "CancelTournament": lambda md: stub.CancelTournament(
                        tpb.CancelTournamentRequest(tournament_id="t-x"), metadata=md, timeout=10),
                    "GetStandings": lambda md: stub.GetStandings(
                        tpb.GetStandingsRequest(tournament_id="t-x"), metadata=md, timeout=10),
                    "ExportResults": lambda md: stub.ExportResults(
                        tpb.ExportResultsRequest(tournament_id="t-x"), metadata=md, timeout=10),
                }
                bad = [None, (("authorization", f"Bearer {bot_token('bot')}"),),
                       (("authorization", "Bearer wrong"),), (("authorization", ADMIN),)]
                for md in bad:
                    for name, call in calls.items():
                        try:
                            await call(md)
                            raise AssertionError(f"{name} worked with {md}")
                        except grpc.aio.AioRpcError as e:
                            assert e.code() == grpc.StatusCode.UNAUTHENTICATED, (name, md, e)
                    stream = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id="t-x"),
                                                  metadata=md, timeout=10)
                    try:
                        await stream.read()
                        raise AssertionError(f"WatchTournament worked with {md}")
                    except grpc.aio.AioRpcError as e:
                        assert e.code() == grpc.StatusCode.UNAUTHENTICATED
                assert store.tournaments() == []  # nothing was created
                # With the admin token they all work.
                md = (("authorization", f"Bearer {ADMIN}"),)
                made = await calls["CreateTournament"](md)
                tid = made.tournament.id
                assert made.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
                assert made.tournament.games_total == 2
                listed = await calls["ListTournaments"](md)
                assert [t.id for t in listed.tournaments] == [tid]
                st = await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid),
                                             metadata=md, timeout=10)
                assert sorted(r.bot for r in st.rows) == ["p1", "p2"]
                assert all(r.games == 0 for r in st.rows)
                ex = await stub.ExportResults(tpb.ExportResultsRequest(tournament_id=tid),
                                              metadata=md, timeout=10)
                assert list(ex.records_json) == [] and "auth cup" in ex.report_markdown
                watch = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                             metadata=md, timeout=10)
                ev = await watch.read()
                assert ev.tournament.id == tid
                assert ev.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
                c = await stub.CancelTournament(tpb.CancelTournamentRequest(tournament_id=tid),
                                                metadata=md, timeout=10)
                assert c.tournament.status == tpb.TOURNAMENT_STATUS_CANCELLED
                rest = []
                while (m := await watch.read()) is not grpc.aio.EOF:
                    rest.append(m)
                assert rest and rest[-1].message == "tournament cancelled"
                assert rest[-1].tournament.status == tpb.TOURNAMENT_STATUS_CANCELLED
                # Unknown ids are NOT_FOUND; bad declarations INVALID_ARGUMENT.
                try:
                    await calls["GetStandings"](md)
                    raise AssertionError("unknown tournament found")
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.NOT_FOUND
                try:
                    await stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
                        name="bad", participants=[tpb.Participant(name="p1"),
                                                  tpb.Participant(name="p1")])),
                        metadata=md, timeout=10)
                    raise AssertionError("duplicate names accepted")
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
                    assert "participants" in (e.details() or "")
                # The admin token is not a bot token.
                assert tokens.bot_for(ADMIN) is None
        finally:
            await server.stop(0)
            store.close()

    run(main())


def test_the_demo_tournament_file_checks(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*CLI, "tournament", "check", str(ROOT / "sample_bots" / "demo_tournament.toml")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid" in proc.stdout and "4 bots" in proc.stdout and "24 games" in proc.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ntable_size = 3\n[[participants]]\nname = "a"\n'
                   '[[participants]]\nname = "b"\n', encoding="utf-8")
    proc = subprocess.run([*CLI, "tournament", "check", str(bad)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "table_size" in proc.stdout

