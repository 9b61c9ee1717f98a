"""A ladder played end to end: a real referee server on port 0, a real SQLite
store, in-process SDK bots over gRPC (tests/support/inproc.py). Entered bots that are connected
and idle are seated again and again and never dismissed while it is open; a late entrant
plays; a bot that leaves is not forfeited for being away and plays again when it comes
back; every finished game updates the ratings once, durably, and they equal a
recomputation from the stored games."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon_referee.auth import TokenBook, digest
from chinchon_referee.director.director import Director
from chinchon_referee.ladder.ladders import Ladders
from chinchon_referee.ladder.matchmaking import LastTable
from chinchon_referee.ladder.runner import last_tables
from chinchon_referee.ladder.spec import LadderSpec
from chinchon_referee.service.server import start_server
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.ladders import LadderGameRow, LadderGameStatus, LadderStatus

from tests.support.fixture_types import SpawnBot, StartAdminServer
from tests.support.helpers import ADMIN, bot_token
from tests.support.inproc import sdk
from tests.support.ladder_run import LADDER, LadderEnv, check_ratings, entrants, ladder_spec, no_game_running


async def test_a_ladder_seats_its_bots_again_and_again_with_a_late_joiner_and_a_leaver(
        ladder_env: LadderEnv, bots: SpawnBot) -> None:
    env = ladder_env
    lid, _ = env.ladders.create(ladder_spec(["a", "b", "c", "d"]))
    env.ladders.start(lid)
    a = await bots(sdk("greedy"), env.server, "a")
    b = await bots(sdk("random"), env.server, "b")
    c = await bots(sdk("greedy"), env.server, "c")
    await env.until(lambda: len(env.rated) >= 6, "six games among a, b, c")
    assert env.games_of("d") == 0

    # d joins late: it is seated within the next few games (the most uncertain first).
    d = await bots(sdk("random"), env.server, "d")
    seen = len(env.rated)
    await env.until(lambda: env.games_of("d") >= 2, "d's first games")
    assert any("d" in g.players for g in env.rated[seen:seen + 4])

    # b leaves; the others go on without it, and b is not forfeited for being away.
    await b.kill()
    run = env.ladders.runs[lid]
    # A game b was at when it left follows the policies (the grace, then a forfeit).
    await env.until(lambda: "b" not in run.seated, "b's game in progress ended")
    gone = len(env.rated)
    await env.until(lambda: len(env.rated) >= gone + 6, "six games while b is away")
    assert all("b" not in g.players for g in env.rated[gone:])
    b_games = env.games_of("b")

    # b comes back (a new stream with its token) and is seated again.
    b = await bots(sdk("random"), env.server, "b")
    await env.until(lambda: env.games_of("b") > b_games, "b's game after it came back")

    # Entered, connected, idle: never dismissed while the ladder is open.
    assert all(p.returncode is None for p in (a, b, c, d))
    board = env.ladders.board(lid)
    assert {p.standing.bot for p in board.places} == {"a", "b", "c", "d"}
    assert set(board.connected) == {"a", "b", "c", "d"}

    await env.ladders.close(lid)
    await asyncio.wait_for(env.ladders.wait(lid), 60)
    # Closed: the games in progress ended and were rated; the bots are dismissed.
    for p in (a, b, c, d):
        assert await p.wait(30) == 0, p.err
    assert env.store.ladder(lid).status is LadderStatus.CLOSED  # type: ignore[union-attr]
    counts = env.store.ladder_game_counts(lid)
    assert counts.get(LadderGameStatus.RUNNING, 0) == 0
    check_ratings(env, lid)
    games = env.store.ladder_games(lid)
    assert len({g.id for g in games}) == len(games)  # one deal per game: none repeats
    assert sum(1 for g in games if "b" in g.players and g.result is not None
               and g.result.forfeited is not None) <= 1


async def test_a_paused_ladder_seats_no_one_and_resumes(
        ladder_env: LadderEnv, bots: SpawnBot) -> None:
    env = ladder_env
    lid, _ = env.ladders.create(ladder_spec(["p", "q"]))
    env.ladders.start(lid)
    await bots(sdk("greedy"), env.server, "p")
    await bots(sdk("random"), env.server, "q")
    await env.until(lambda: len(env.rated) >= 2, "two games")
    await env.ladders.set_status(lid, LadderStatus.PAUSED)
    await asyncio.wait_for(no_game_running(env, lid), 60)
    paused_at = len(env.rated)
    # Paused: both bots wait, connected, and nothing is seated (the lobby is told of
    # their idle streams, and the ladder looks, each time).
    lobby = env.server.referee.lobby
    assert lobby.connected("p") and lobby.connected("q")
    assert len(env.rated) == paused_at
    await env.ladders.set_status(lid, LadderStatus.OPEN)
    await env.until(lambda: len(env.rated) >= paused_at + 2, "games after resuming")
    check_ratings(env, lid)


async def test_a_referee_stopped_mid_game_resumes_its_ladder_with_the_ratings_it_stored(
        tmp_path: Path, bots: SpawnBot) -> None:
    """The referee stops (with games in progress, they stay running, unrated; a game row
    left running as a kill -9 leaves it is written between the two lives). A new referee
    over the same database voids them, runs the ladder again (resume_all), and the
    ratings stay equal to a recomputation from the stored games."""
    env = None
    for life in range(2):
        tokens = TokenBook(ADMIN)
        server = await start_server("127.0.0.1:0", None, tokens)
        store = SqliteStore(str(tmp_path / "ladder.sqlite3"))
        director = Director(server.referee, store, tokens)
        for name, known in store.bots():
            tokens.add_digest(name, known)
        ladders = Ladders(server.referee, store, tokens, keep=director.remaining.declared,
                          release=lambda tid, bots: None)
        env = LadderEnv(server, store, director, ladders)
        ladders.listeners.append(env.heard)
        try:
            if life == 0:
                lid, _ = ladders.create(ladder_spec(["x", "y"]))
                ladders.start(lid)
            else:
                assert ladders.resume_all() == [lid]
            await bots(sdk("greedy"), server, "x")
            await bots(sdk("random"), server, "y")
            await env.played(2)
        finally:
            await server.stop(0)
            await ladders.settle(10.0)
            if life == 0:  # what a kill -9 mid-game leaves behind
                store.begin_ladder_game(lid, f"{lid}-killed", ["x", "y"])
            else:
                check_ratings(env, lid)
            store.close()
    store = SqliteStore(str(tmp_path / "ladder.sqlite3"))
    try:
        assert sum(1 for g in store.ladder_games(lid)) >= 4
        counts = store.ladder_game_counts(lid)
        assert counts.get(LadderGameStatus.VOID, 0) >= 1  # the first life's game in progress
    finally:
        store.close()


async def test_the_ladder_service_needs_the_admin_token_and_checks_what_it_is_given(
        tmp_path: Path, admin_servers: StartAdminServer) -> None:
    tokens = TokenBook(ADMIN)
    tokens.add("bot", bot_token("bot"))
    server, store = await admin_servers(tokens, tmp_path / "admin.sqlite3")
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = lpb_grpc.LadderServiceStub(ch)  # type: ignore[no-untyped-call]
        create = lpb.CreateLadderRequest(declaration='name = "x"\n')
        for md in [None, (("authorization", f"Bearer {bot_token('bot')}"),)]:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateLadder(create, metadata=md, timeout=10)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert store.ladders() == []
        admin = (("authorization", f"Bearer {ADMIN}"),)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.CreateLadder(lpb.CreateLadderRequest(declaration="k = -1\nname = 'x'"),
                                    metadata=admin, timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "k: a number from 0" in (err.value.details() or "")
        made = await stub.CreateLadder(create, metadata=admin, timeout=10)
        lid = made.ladder.id
        assert made.ladder.status == lpb.LADDER_STATUS_OPEN
        entered = await stub.EnterLadder(lpb.EnterLadderRequest(ladder_id=lid, bot="newbie"),
                                         metadata=admin, timeout=10)
        assert entered.entrant.token  # a new bot: its token, shown once
        assert tokens.bot_for(entered.entrant.token) == "newbie"
        board = await stub.GetLeaderboard(lpb.GetLeaderboardRequest(ladder_id=lid),
                                          metadata=admin, timeout=10)
        assert [r.bot for r in board.rows] == ["newbie"] and board.rows[0].score == 0.0
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetLeaderboard(lpb.GetLeaderboardRequest(ladder_id="l-none"),
                                      metadata=admin, timeout=10)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        closed = await stub.SetLadderStatus(lpb.SetLadderStatusRequest(
            ladder_id=lid, status=lpb.LADDER_STATUS_CLOSED), metadata=admin, timeout=10)
        assert closed.changed and closed.ladder.status == lpb.LADDER_STATUS_CLOSED
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.SetLadderStatus(lpb.SetLadderStatusRequest(
                ladder_id=lid, status=lpb.LADDER_STATUS_OPEN), metadata=admin, timeout=10)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_an_open_entry_ladder_enters_any_registered_bot_that_connects(
        ladder_env: LadderEnv, bots: SpawnBot) -> None:
    env = ladder_env
    for name in ("u", "v"):  # registered on the referee, not declared in the ladder
        env.store.add_bot(name, digest(bot_token(name)))
        env.server.tokens.add(name, bot_token(name))
    lid, _ = env.ladders.create(LadderSpec.from_toml_text('entry = "registered"\n' + LADDER))
    env.ladders.start(lid)
    await bots(sdk("greedy"), env.server, "u")
    await bots(sdk("random"), env.server, "v")
    await env.played(2)
    assert {e.bot for e in env.store.entrants(lid)} == {"u", "v"}
    # Removed, a bot is not entered again when it comes back.
    env.ladders.remove(lid, "v")
    assert "v" not in env.ladders.runs[lid].entrants
    check_ratings(env, lid)


def test_a_restarted_run_learns_each_bots_last_table_from_the_newest_games() -> None:
    def game(players: list[str]) -> LadderGameRow:
        return LadderGameRow("g", "l", players, LadderGameStatus.FINISHED, 0.0)

    last = last_tables([game(["a", "b"]), game(["c", "a"]), game(["b", "c"])])
    assert last == {"a": LastTable(("a", "b"), 0), "b": LastTable(("a", "b"), 1),
                    "c": LastTable(("c", "a"), 0)}


async def test_a_ladder_closes_by_itself_at_the_end_of_its_window(
        ladder_env: LadderEnv, bots: SpawnBot) -> None:
    env = ladder_env
    closes = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)).isoformat()
    lid, _ = env.ladders.create(LadderSpec.from_toml_text(
        f'closes = "{closes}"\n' + LADDER + entrants(["w1", "w2"])))
    env.ladders.start(lid)
    w1 = await bots(sdk("greedy"), env.server, "w1")
    w2 = await bots(sdk("random"), env.server, "w2")
    await asyncio.wait_for(env.ladders.wait(lid), 60)  # the window closed: the run ended
    assert env.store.ladder(lid).status is LadderStatus.CLOSED  # type: ignore[union-attr]
    assert await w1.wait(30) == 0 and await w2.wait(30) == 0  # dismissed
    check_ratings(env, lid)
