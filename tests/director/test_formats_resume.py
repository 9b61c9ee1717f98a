"""A format's tournament survives ``kill -9`` of ``chinchon serve`` in the middle of a
Swiss round and in the middle of a knockout's matches: restarted on the same database,
it resumes, creates the rounds and matches that follow exactly once, and what is
stored at the end is exactly what the format makes of its results, step by step (the
same rounds and bracket as a run without the kill would have given these results). A
Swiss stopped between two rounds creates the next one when it resumes."""

from __future__ import annotations

import asyncio
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import GameRow, SqliteStore
from chinchon_referee.tournament.formats.games import Create
from chinchon_referee.tournament.formats.plan import Next, next_games
from chinchon_referee.tournament.model import TournamentSpec, declared
from chinchon_referee.tournament.wire import spec_to_proto
from chinchon_referee.vocabulary import TournamentStatus

from tests.support.fixture_types import SpawnBot
from tests.support.formats import finish
from tests.support.helpers import ADMIN
from tests.support.inproc import sdk
from tests.support.serve import Serve, db_games, free_port, launch_sdk_bots, stop_all, watch
from tests.support.tournament import InProcess, spec_dict
from tests.support.waits import until_sync

MD = (("authorization", f"Bearer {ADMIN}"),)
BOTS = {"ra": "greedy", "rb": "random", "rc": "greedy", "rd": "random", "re": "greedy",
        "rf": "random"}


def replayed(spec: TournamentSpec, tid: str, rows: list[GameRow]) -> int:
    """Check that ``rows`` (every game stored, all finished) are exactly the games the
    format creates from their own results, step after step; the steps taken."""
    by_id = {r.id: r for r in rows}
    known: dict[str, GameRow] = {}
    steps = 0
    while isinstance(step := next_games(spec, tid, list(known.values())), Next):
        assert isinstance(step.step, Create), f"waits on {step.step} with every game known"
        for g in step.step.games:
            row = by_id.get(g.id)
            assert row is not None, f"{g.id} is due but was never stored"
            assert (row.seq, row.players, row.deal_id) == (g.seq, list(g.players), g.deal_id)
            known[g.id] = row
        steps += 1
    assert set(known) == set(by_id), "games stored that the format never asked for"
    return steps


def mid_swiss_round(games: dict[str, dict[str, Any]]) -> bool:
    """Round 1 (3 tables of 2 games) is over, round 2 is being played."""
    now = Counter(v["status"] for v in games.values())
    return now["finished"] >= 7 and now["running"] >= 1


def mid_matches(games: dict[str, dict[str, Any]]) -> bool:
    now = Counter(v["status"] for v in games.values())
    return now["finished"] >= 3 and now["running"] >= 1


CASES = {
    "swiss": ({"kind": "swiss", "rounds": 3}, mid_swiss_round),
    "knockout": ({"kind": "knockout", "match": {"games": 3}}, mid_matches),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_kill_9_mid_format_then_resume(kind: str, tmp_path: Path) -> None:
    fmt, moment = CASES[kind]
    port, db = free_port(), tmp_path / "formats.sqlite3"
    spec = TournamentSpec.from_dict(spec_dict(f"kill {kind}", list(BOTS), format=fmt,
                                              concurrency=2, start="when_connected",
                                              policies={"reconnect_grace": 15.0}))
    servers: list[Serve] = []
    procs: list[subprocess.Popen[bytes]] = []
    try:
        servers.append(Serve(tmp_path, port, db, 1))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec_to_proto(spec)),
                                        metadata=MD, timeout=30).tournament.id
        procs += launch_sdk_bots(tmp_path, port, BOTS, streams=2)
        until_sync(lambda: moment(db_games(db, tid)), f"mid-{kind}", 120,
                   detail=lambda: Counter(v["status"] for v in db_games(db, tid).values()))
        servers[0].kill9()
        before = db_games(db, tid)
        running = {k for k, v in before.items() if v["status"] == "running"}
        done = {k: v["record"] for k, v in before.items() if v["status"] == "finished"}

        servers.append(Serve(tmp_path, port, db, 2))
        events: list[tpb.WatchTournamentResponse] = []
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            watcher = watch(stub, tid, events)
            watcher.join(300)
            assert not watcher.is_alive(), "the tournament did not finish"
            assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=MD,
                                   timeout=30)
        after = db_games(db, tid)
        assert all(v["status"] == "finished" for v in after.values())
        for k, rec in done.items():  # finished before the kill: untouched
            assert after[k]["record"] == rec and after[k]["voided"] == 0
        for k, v in after.items():  # in flight at the kill: voided once, played again
            assert v["voided"] == (1 if k in running else 0), k
        ended = Counter(e.game_id for e in events if e.HasField("result"))
        assert all(n == 1 for n in ended.values()) and not set(ended) & set(done)
    finally:
        stop_all(procs, servers)
    store = SqliteStore(str(db))
    try:
        row = store.tournament(tid)
        assert row is not None
        steps = replayed(declared(row.spec), tid, store.schedule(tid))
    finally:
        store.close()
    assert steps >= 3  # the first games, then at least two steps created as they came due
    assert sorted(st.final_ranking) == sorted(BOTS)
    if kind == "swiss":
        assert [r.round for r in st.stages[0].rounds] == [1, 2, 3]
    else:
        assert st.stages[0].matches and st.final_ranking[0] == next(
            m.winner for m in st.stages[0].matches if m.round == 3)


async def test_a_swiss_stopped_between_two_rounds_resumes_with_the_next_round(
        env: InProcess, bots: SpawnBot) -> None:
    """The referee stopped after round 1's last result was stored and before round 2
    was created (its results stored as a previous life left them, the tournament
    running): started again, the director creates round 2 from them, the round the
    format makes of them, then plays the rest; round 1 stays as it was."""
    spec = TournamentSpec.from_dict(spec_dict("between", ["a", "b", "c", "d"], concurrency=2,
                                              format={"kind": "swiss", "rounds": 3}))
    tid, _ = env.director.create(spec)
    first = env.store.schedule(tid)
    assert len(first) == 2 * 2  # round 1: two tables of two games
    for i, row in enumerate(first):  # seat 0 wins at table 1, seat 1 at table 2
        finish(row, (i // 2,))
        env.store.finish_game(row)
    env.store.set_tournament_status(tid, TournamentStatus.RUNNING)
    expected = next_games(declared(env.store.tournament(tid).spec), tid,  # type: ignore[union-attr]
                          env.store.schedule(tid))
    assert isinstance(expected, Next) and isinstance(expected.step, Create)
    for b in spec.bots:
        await bots(sdk("greedy"), env.server, b)
    assert await env.server.referee.lobby.wait_all(list(spec.bots), 60)
    env.director.start(tid, resumed=True)
    await asyncio.wait_for(env.director.wait(tid), 300)
    row = env.store.tournament(tid)
    assert row is not None and row.status is TournamentStatus.FINISHED
    games = {g.id: g for g in env.store.schedule(tid)}
    assert len(games) == 3 * 2 * 2
    for g in expected.step.games:  # round 2: the one the format made of round 1
        assert games[g.id].players == list(g.players) and games[g.id].deal_id == g.deal_id
    for old in first:  # round 1: untouched
        assert games[old.id].result == old.result and games[old.id].voided == 0
    assert replayed(declared(row.spec), tid, list(games.values())) == 3
