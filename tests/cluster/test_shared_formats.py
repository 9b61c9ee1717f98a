"""A Swiss played by two ``chinchon serve --shared`` processes on one PostgreSQL
database: each round is created once (the processes' logs count every game created
exactly once between them), every game is played once, by either process, and what is
stored is exactly what the format makes of the stored results."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import open_store
from chinchon_referee.tournament.formats.games import Create
from chinchon_referee.tournament.formats.plan import Next, next_games
from chinchon_referee.tournament.model import TournamentSpec, declared
from chinchon_referee.tournament.wire import spec_to_proto

from tests.support.helpers import ADMIN, bot_token, sdk_bot
from tests.support.serve import Serve, db_games, free_port, stop_all, watch
from tests.support.tournament import spec_dict

AUTH = (("authorization", f"Bearer {ADMIN}"),)
BOTS = {"wa": "greedy", "wb": "random", "wc": "greedy", "wd": "random", "we": "greedy",
        "wf": "random"}
ROUNDS, PER_TABLE = 4, 4


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("pg_url"))


def created(err: Path) -> list[dict[str, object]]:
    """The ``games_created`` events a process logged (one JSON object a line)."""
    out = []
    for line in err.read_text(encoding="utf-8").splitlines():
        if '"games_created"' in line:
            out.append(json.loads(line[line.index("{"):]))
    return out


def test_two_processes_create_each_swiss_round_once(tmp_path: Path, url: str) -> None:
    spec = TournamentSpec.from_dict(spec_dict(
        "shared swiss", list(BOTS), games_per_pairing=PER_TABLE, concurrency=4,
        start="when_connected", rules={"score_limit": 20}, policies={"reconnect_grace": 10.0},
        format={"kind": "swiss", "rounds": ROUNDS}))
    servers = [Serve(tmp_path, free_port(), url, i, ["--shared", "--lease", "3",
                                                     "--log-level", "info"])
               for i in range(2)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ports = [s._listening()[0]["port"] for s in servers]
        with grpc.insecure_channel(f"127.0.0.1:{ports[0]}") as ch:
            tid = tpb_grpc.TournamentServiceStub(ch).CreateTournament(
                tpb.CreateTournamentRequest(spec=spec_to_proto(spec)), metadata=AUTH,
                timeout=30).tournament.id
        events: list[tpb.WatchTournamentResponse] = []
        with grpc.insecure_channel(f"127.0.0.1:{ports[1]}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            watcher = watch(stub, tid, events)
            targets = ",".join(f"127.0.0.1:{p}" for p in ports)
            for b, kind in BOTS.items():
                with open(tmp_path / f"{b}.bot.log", "wb") as err:
                    procs.append(subprocess.Popen(
                        [*sdk_bot(kind), "--target", targets, "--token", bot_token(b)],
                        stdout=subprocess.DEVNULL, stderr=err,
                        env=dict(os.environ, PYTHONUNBUFFERED="1")))
            watcher.join(300)
            assert not watcher.is_alive(), "the tournament did not finish"
            assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=AUTH,
                                   timeout=30)
        total = ROUNDS * 3 * PER_TABLE
        games = db_games(url, tid)
        assert len(games) == total
        assert Counter(v["status"] for v in games.values()) == {"finished": total}
        assert len(Counter(v["owner"] for v in games.values())) == 2  # both played
        ended = Counter(e.game_id for e in events if e.HasField("result"))
        assert len(ended) == total and set(ended.values()) == {1}
        # Rounds 2.. were created as they came due, each game by one process only
        # (the first round was stored when the tournament was declared).
        logged = [e for s in servers for e in created(s.err)]
        assert sum(int(str(e["new"])) for e in logged) == total - 3 * PER_TABLE
        by_round = Counter(str(e["rounds"]) for e in logged if int(str(e["new"])))
        assert sorted(by_round) == [f"[{r}]" for r in range(2, ROUNDS + 1)]
        assert [r.round for r in st.stages[0].rounds] == list(range(1, ROUNDS + 1))
        pairs = [frozenset(t.players) for r in st.stages[0].rounds for t in r.tables]
        assert len(pairs) == len(set(pairs))
        for p in procs:  # dismissed by both processes at the end
            assert p.wait(60) == 0
    finally:
        stop_all(procs, servers)
    store = open_store(url)
    try:
        row = store.tournament(tid)
        assert row is not None
        known: dict[str, object] = {}
        rows = {r.id: r for r in store.schedule(tid)}
        while isinstance(step := next_games(declared(row.spec), tid,
                                            [rows[i] for i in known]), Next):
            assert isinstance(step.step, Create)
            for g in step.step.games:
                assert rows[g.id].players == list(g.players)
                known[g.id] = g
        assert set(known) == set(rows)
    finally:
        store.close()
