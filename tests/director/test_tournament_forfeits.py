"""Tournaments with bots that never connect, are absent, or crash mid-tournament."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import grpc
from chinchon_referee.director.director import Director
from chinchon_referee.host.processes import spawn as spawn_process
from chinchon_referee.storage import GameRow
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ROOT, BotProc, bot_token, sdk_bot, stop
from tests.support.inproc import sdk
from tests.support.referee import Bot
from tests.support.tournament import (
    FORFEITED_ABSENT,
    PLAYED,
    InProcess,
    check_record,
    spec_dict,
)
from tests.support.waits import until

# -- b: a bot that never connects ----------------------------------------------------------


async def test_a_bot_that_never_connects_forfeits_every_game(env: InProcess, bots: SpawnBot) -> None:
    grace = 1.0

    # absence_limit 0: once the ghost missed a game, its other games forfeit at once.
    spec = TournamentSpec.from_dict(spec_dict(
        "no-show", ["a", "b", "ghost"],
        policies={"reconnect_grace": grace, "absence_limit": 0.0}))
    tid, parts = env.director.create(spec)
    assert [p.token for p in parts] == [bot_token("a"), bot_token("b"), bot_token("ghost")]
    procs = [await bots(sdk("greedy"), env.server, "a"),
             await bots(sdk("random"), env.server, "b")]
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    env.watch(tid)
    t0 = time.monotonic()
    await asyncio.wait_for(env.director.run(tid), 90)
    elapsed = time.monotonic() - t0
    await env.watched()
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
    # The first of them waited the grace for its bots (before it started), the others
    # forfeited at once.
    last_played = max(ended[x.id] for x in games if "ghost" not in x.players)
    assert min(ended[x.id] for x in ghost_games) - last_played >= grace * 0.9
    waits = sorted(ended[x.id] - started[x.id] for x in ghost_games)
    assert all(w < grace * 0.5 for w in waits), waits
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


async def test_an_absent_bot_forfeits_its_remaining_games_at_once_after_the_absence_limit(
    env: InProcess, bots: SpawnBot,
) -> None:
    """Below the organizer's absence limit, each game of a missing bot that comes due
    (nothing else left to play) waits the grace alone; past the limit, counted from its
    first no-show, the rest forfeit at once."""
    grace, limit = 1.0, 2.5

    spec = TournamentSpec.from_dict(spec_dict(
        "limit", ["a", "b", "ghost"], games_per_pairing=6,
        policies={"reconnect_grace": grace, "absence_limit": limit}))
    tid, _ = env.director.create(spec)
    procs = [await bots(sdk("greedy"), env.server, "a"),
             await bots(sdk("random"), env.server, "b")]
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    env.watch(tid)
    await asyncio.wait_for(env.director.run(tid), 120)
    await env.watched()
    await stop(*procs)
    games = env.store.games(tid)
    ghost = [x for x in games if "ghost" in x.players]
    assert len(ghost) == 12
    assert all(x.record["result"]["termination"] == "TERMINATION_FORFEIT_NO_SHOW"
               for x in ghost)
    started = {e.game_id: e.time for e in env.events if e.game_id and e.result is None}
    ended = {e.game_id: e.time for e in env.events if e.result is not None}
    order = sorted(ghost, key=lambda x: started[x.id])
    ends = sorted(ended.values())

    def gap(x: GameRow) -> float:
        """How long after the game before it this one ended (a due game waits the grace
        before it starts)."""
        return ended[x.id] - max((t for t in ends if t < ended[x.id]), default=ended[x.id])

    waited = [gap(x) >= grace * 0.9 for x in order]
    n = waited.index(False)  # the first game forfeited at once
    # Waited one at a time first (more than the first no-show alone), then none.
    assert 2 <= n <= 1 + math.ceil(limit / (grace * 0.9)), waited
    assert not any(waited[n:]), waited
    first_no_show = ended[order[0].id]
    assert started[order[n].id] - first_no_show >= limit * 0.9


# -- c: a bot that crashes mid-tournament --------------------------------------------------


async def test_a_bot_that_crashes_forfeits_its_remaining_games(env: InProcess, bots: SpawnBot) -> None:
    names = ["a", "b", "d", "crash"]
    spec = TournamentSpec.from_dict(spec_dict("crash", names))
    tid, _ = env.director.create(spec)
    players = {x.id: x.players for x in env.store.games(tid)}
    procs = {b: await bots(sdk_bot("greedy") if b == "crash"  # a process, killed -9
                           else sdk("greedy" if b != "b" else "random"), env.server, b)
             for b in names}
    killed_after: list[str] = []

    async def killer() -> None:
        async for ev in env.director.watch(tid):
            if ev.result is not None and "crash" in players[ev.game_id] and not killed_after:
                procs["crash"].proc.send_signal(signal.SIGKILL)
                killed_after.append(ev.game_id)

    assert await env.server.referee.lobby.wait_all(names, 120)
    env.watch(tid)
    kill_task = asyncio.ensure_future(killer())
    await asyncio.wait_for(env.director.run(tid), 90)
    await env.watched()
    await asyncio.wait_for(kill_task, 5)
    assert await asyncio.wait_for(procs["crash"].proc.wait(), 5) == -signal.SIGKILL
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


async def test_a_bot_back_after_the_grace_loses_only_the_games_due_while_nothing_else_could_be_played(
    env: InProcess, bots: SpawnBot,
) -> None:
    """A bot killed mid-tournament and restarted after longer than the grace: while it is
    away every other game is played; only a game that came due with nothing else to play
    forfeits (NO_SHOW, after the grace); once back it plays its postponed games."""
    grace = 5.0

    names = ["a", "b", "d", "crash"]
    spec = TournamentSpec.from_dict(spec_dict(
        "absent", names, policies={"reconnect_grace": grace, "absence_limit": 600.0}))
    tid, _ = env.director.create(spec)
    players = {x.id: x.players for x in env.store.games(tid)}
    procs = {b: await bots(sdk_bot("greedy") if b == "crash" else sdk("greedy"), env.server, b)
             for b in names}  # "crash" is a process, killed -9
    # The restarted bot: started now, connects when the test lets it (a line on stdin).
    gated = BotProc(await spawn_process(
        [sys.executable, str(ROOT / "tests" / "bots" / "gated_bot.py"), "--bot", "greedy",
         "--target", env.server.target, "--token", bot_token("crash")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED="1")))
    killed_after: list[str] = []
    released: list[str] = []

    async def killer() -> None:
        async for ev in env.director.watch(tid):
            if ev.result is None or "crash" not in players[ev.game_id]:
                continue
            if not killed_after:
                procs["crash"].proc.send_signal(signal.SIGKILL)
                killed_after.append(ev.game_id)
            elif ev.result.termination == "TERMINATION_FORFEIT_NO_SHOW" and not released:
                # Away for longer than the grace: come back now.
                assert gated.proc.stdin is not None
                gated.proc.stdin.write(b"go\n")
                await gated.proc.stdin.drain()
                released.append(ev.game_id)

    try:
        assert await env.server.referee.lobby.wait_all(names, 120)
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
    ends = sorted(ended.values())
    for i in no_shows:
        assert started[i] >= last_other - 0.01, (i, started[i], last_other)
        # It waited the grace (before it started) after the game before it ended.
        before = max(t for t in ends if t < ended[i])
        assert ended[i] - before >= grace * 0.9
    # Back: its postponed games were played, not forfeited.
    after = [i for i in mine if started[i] > ended[released[0]]]
    played_after = [i for i in after if term[i] in PLAYED]
    assert len(played_after) >= 2 and len(played_after) == len(after) - (len(no_shows) - 1)
    st = env.director.standings(tid)
    crash = next(r for r in st.rows if r.bot == "crash")
    assert crash.forfeits == len(no_shows) + len(dropped)


# -- a bot that is connected is never a no-show ------------------------------------------

#: Time for the director to seat the games it can before the next bot connects (the
#: wrong thing, before the fix): a negative check's window.
QUIET = 0.5


async def test_a_connected_bot_whose_streams_are_busy_is_never_a_no_show(env: InProcess) -> None:
    """A tournament that starts before its bots connect: its first game comes due with
    nobody there. Its second bot connects, one stream each, with a third bot, before its
    first does: before, the director seated them in another game (held here: the third
    bot thinks), and the due game, its first bot come, waited the grace for the second
    and forfeited it NO_SHOW though it was connected all along. Now the due game holds
    its bots' streams for itself, and a bot that is connected is waited for, never
    forfeited."""
    spec = TournamentSpec.from_dict(spec_dict(
        "busy", ["x", "y", "z"], games_per_pairing=2, concurrency=2,
        # z thinks until the due game has ended (up to 180 s on a busy machine): its clock
        # outlasts that, so that its held game never ends by a timeout.
        rules={"score_limit": 30}, time_control={"per_move": 10.0, "bank": 300.0},
        policies={"reconnect_grace": 1.0, "absence_limit": 600.0}))
    tid, _ = env.director.create(spec)
    first = env.store.games(tid)[0]
    x, y = first.players
    (z,) = {"x", "y", "z"} - {x, y}
    env.watch(tid)
    run = asyncio.ensure_future(env.director.run(tid))
    clients = {b: Bot(env.server.target, b) for b in (x, y, z)}
    clients[z].gate.clear()  # z holds whatever game it is seated in
    # The premise: the first game is due (waiting for its seats) before any bot connects.
    # Were y and z to connect first, y-z would rightly be played while x is away, and z
    # holds it until the first game ends: the test's own deadlock, not the director's.
    await until(lambda: env.director.seating.reserved[x] > 0, "the first game to come due")
    playing = []
    for b in (y, z):
        await clients[b].back()
        playing.append(asyncio.ensure_future(_play_all(clients[b])))
    await asyncio.sleep(QUIET)
    await clients[x].back()
    playing.append(asyncio.ensure_future(_play_all(clients[x])))
    try:
        await until(lambda: first.id in env.ended(), "the due game to end", 180)
        assert next(g for g in env.store.games(tid) if g.id == first.id).result.termination \
            .value in PLAYED
        clients[z].gate.set()
        await asyncio.wait_for(run, 120)
        await env.watched()
    finally:
        for t in playing:
            t.cancel()
        for c in clients.values():
            await c.drop()
    games = env.store.games(tid)
    assert all(g.status == "finished" for g in games)
    assert [(g.id, g.result.termination.value, g.result.summary) for g in games
            if g.result.termination.value not in PLAYED] == []


async def _play_all(bot: Bot) -> None:
    """Answer every request (while the bot's gate is open) until the stream ends."""
    while True:
        msg = await bot.call.read()
        if msg is grpc.aio.EOF:
            return
        if msg.WhichOneof("kind") == "action_request":
            await bot.gate.wait()
            await bot.answer(msg.action_request)
