"""Creating a large tournament never freezes the referee: the schedule is built and
stored in a worker thread, in short transactions, while the games in progress go on.
(It was built on the event loop: 100,000 games froze the referee for seconds and gave
honest bots timeout strikes.) A schedule beyond the limit is refused, storing nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import grpc
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import duration
from chinchon_referee.tournament.model import MAX_GAMES

from tests.support.fixture_types import SpawnBot, StartAdminServer
from tests.support.helpers import ADMIN, tokens_for
from tests.support.inproc import sdk

MD = (("authorization", f"Bearer {ADMIN}"),)
#: 100 bots, 4,950 pairings, 20 games each: 99,000 games, just under MAX_GAMES.
BIG = 99_000
#: The probes' period: the lag probe measures how late a sleep this long ends.
PROBE = 0.01


def big_spec(games_per_pairing: int) -> tpb.TournamentSpec:
    return tpb.TournamentSpec(
        name="big league", participants=[tpb.Participant(name=f"b{i:03d}") for i in range(100)],
        games_per_pairing=games_per_pairing, seed="big",  # start: manual
    )


async def test_creating_a_huge_tournament_keeps_the_games_in_progress_going(
    tmp_path: Path, admin_servers: StartAdminServer, bots: SpawnBot,
) -> None:
    assert BIG <= MAX_GAMES
    db = tmp_path / "ref.sqlite3"
    server, _store = await admin_servers(tokens_for(["alice", "bob"]), db)
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        small = await stub.CreateTournament(tpb.CreateTournamentRequest(
            spec=tpb.TournamentSpec(
                name="small", seed="small", games_per_pairing=40, concurrency=1,
                participants=[tpb.Participant(name="alice", token="tok-alice-test-token"),
                              tpb.Participant(name="bob", token="tok-bob-test-token")],
                rules=g.RuleSet(score_limit=100),
                time_control=g.TimeControl(per_move=duration(1.0),
                                           bank=duration(5.0)),
                start_when_connected=True)), metadata=MD, timeout=30)
        sid = small.tournament.id
        watch = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=sid),
                                     metadata=MD)
        await bots(sdk("greedy"), server, "alice")
        await bots(sdk("random"), server, "bob")
        # Wait until a game of the small tournament is being played.
        while "started" not in (ev := await asyncio.wait_for(watch.read(), 60)).message:
            assert ev != grpc.aio.EOF
        loop = asyncio.get_running_loop()
        lags: list[float] = []
        answers: list[float] = []
        creating = asyncio.Event()

        async def lag_probe() -> None:
            # The measure: how much later than asked a PROBE-long sleep ends.
            while not creating.is_set():
                t = loop.time()
                await asyncio.sleep(PROBE)
                lags.append(loop.time() - t - PROBE)

        async def rpc_probe() -> None:
            # Every admin call touches the store: its lock is never held long.
            while not creating.is_set():
                t = loop.time()
                await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=sid),
                                        metadata=MD, timeout=30)
                answers.append(loop.time() - t)
                await asyncio.sleep(PROBE)  # the probes' pace

        probes = [asyncio.ensure_future(lag_probe()), asyncio.ensure_future(rpc_probe())]
        began = loop.time()
        try:
            made = await stub.CreateTournament(
                tpb.CreateTournamentRequest(spec=big_spec(20)), metadata=MD, timeout=300)
        finally:
            took = loop.time() - began
            creating.set()
            await asyncio.gather(*probes)
        assert made.tournament.games_total == BIG
        assert made.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
        # The loop kept turning (the probes ran all along), never stopped for long:
        # before, it stood still for the whole creation (seconds). Long is measured
        # against the creation itself: on a loaded machine (three test workers on two
        # cores) the process may wait a second for a core, while a loop that stood still
        # for the creation lags all of it.
        assert len(lags) > 20 and len(answers) > 5, (len(lags), len(answers))
        assert max(lags) < max(1.0, took / 4), (took, sorted(lags)[-5:])
        assert max(answers) < max(2.0, took / 2), (took, sorted(answers)[-5:])
        # One past the limit is refused, and nothing of it is stored.
        try:
            await stub.CreateTournament(tpb.CreateTournamentRequest(spec=big_spec(22)),
                                        metadata=MD, timeout=60)
            raise AssertionError("a 108,900-game schedule was accepted")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "games_per_pairing: the schedule would have 108,900 games" in (
                e.details() or ""), e.details()
            assert f"at most {MAX_GAMES:,}" in (e.details() or "")
        listed = await stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=MD,
                                            timeout=30)
        assert sorted(t.id for t in listed.tournaments) == sorted(
            [sid, made.tournament.id])
        # The small tournament's honest bots lost no time to the creation.
        st = await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=sid),
                                     metadata=MD, timeout=30)
        assert all(r.timeouts == 0 and r.forfeits == 0 for r in st.rows), st.rows
        await stub.CancelTournament(tpb.CancelTournamentRequest(tournament_id=sid),
                                    metadata=MD, timeout=30)
        watch.cancel()
    con = sqlite3.connect(db)
    try:
        counts = dict(con.execute("SELECT tournament_id, COUNT(*) FROM games "
                                  "GROUP BY tournament_id").fetchall())
    finally:
        con.close()
    assert sorted(counts.values()) == [40, BIG]  # nothing of the refused one
