"""`chinchon serve` killed (SIGKILL) or stopped (SIGTERM) mid-tournament, restarted and
resumed with no game lost or played twice; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import grpc
from chinchon.engine import HandScore, Outcome, RuleSet, ShuffleSource, attempt_deal, new_game
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.tournament.standings import compute, summarize_game

from tests.support.helpers import ADMIN, bot_token
from tests.support.serve import (
    Serve,
    admin_spec,
    db_games,
    free_port,
    launch_sdk_bots,
    stop_all,
    tournament_status,
    wait_mid_tournament,
    watch,
)
from tests.support.tournament import (
    PLAYED,
    check_record,
    strict_record,
)
from tests.support.waits import until_sync

# -- d: kill -9 and resume through `chinchon serve` and the admin API ------------------------


def test_kill_9_mid_tournament_then_resume(tmp_path: Path, db_target: str) -> None:
    port = free_port()
    db = db_target
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

            watcher = watch(stub, tid, events)
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
            # off by default), the one its seed, deal id and attempt give.
            deals: dict[str, set[str]] = {}
            for k, v in after.items():
                rec = json.loads(v["record"])
                assert rec["gameId"] == k and rec["result"]["termination"] in PLAYED
                check_record(rec)
                # A game voided by the kill is played again from its attempt's deal.
                deal = attempt_deal(v["deal_id"], int(v["voided"]))
                dealt = ShuffleSource("kill-seed", deal).chance(
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
                summarize_game(v["players"], Outcome.from_json(json.loads(v["record"])["result"]),
                               [HandScore.from_json(h) for h in json.loads(v["record"])["hands"]],
                               json.loads(v["stats"]), v["deal_id"])
                for v in after.values()])
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


#: A negative check's window after the referee exits: twice the reconnect grace.
QUIET = 1.0


def test_sigterm_mid_tournament_then_resume(tmp_path: Path, db_target: str) -> None:
    """``chinchon serve`` stopped with SIGTERM in the middle of a tournament, with a short
    reconnect grace: it exits 0; no game is forfeited because of the shutdown (before,
    the game cut at the end of the grace became a disconnect forfeit, and each game left
    a no-show) and the tournament stays running. Started again on the same port and
    database, it resumes; the SDK bots, which retry a referee that is shutting down,
    come back by themselves, and every game is played to its end exactly once."""
    port = free_port()
    db = db_target
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
        time.sleep(QUIET)  # a negative check: nothing is recorded after the exit
        stopped = db_games(db, tid)
        done = {k: v for k, v in stopped.items() if v["status"] == "finished"}
        assert 2 <= len(done) < 10
        for v in done.values():
            assert json.loads(v["record"])["result"]["termination"] in PLAYED
        assert tournament_status(db, tid) == "running"

        servers.append(Serve(tmp_path, port, db, 2))
        until_sync(lambda: all(v["status"] == "finished" for v in db_games(db, tid).values()),
                   "every game finished", 120,
                   detail=lambda: Counter(v["status"] for v in db_games(db, tid).values()))
        after = db_games(db, tid)
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
