"""Hosts whose clocks disagree share a database safely: leases are
written and judged by the database's clock, so a process whose clock runs 10 s ahead,
with leases of 5 s, neither voids the other's games nor loses a result of its own (when
each host judged by its own clock, a skew past half a lease voided the other's games;
leases this long void nothing for a loaded machine's stalls); it says at its heartbeats
that its clock is off (the log's ``clock_skew``, and GetServerStatus). The skewed clock
is real: that process runs under libfaketime."""

from __future__ import annotations

import glob
import json
import subprocess
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from tests.support.helpers import ADMIN, bot_token, sdk_bot
from tests.support.postgres import CI
from tests.support.serve import Serve, admin_spec, db_games, free_port, stop_all, watch

AUTH = (("authorization", f"Bearer {ADMIN}"),)
SKEW = 10.0
LEASE = "5"


def _faketime() -> str:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))
    if not found:
        reason = "libfaketime is not installed (Debian: apt-get install faketime)"
        if CI:
            pytest.fail(f"{reason}; .ci/run installs it")
        pytest.skip(reason)
    return found[0]


def test_a_process_whose_clock_runs_ahead_plays_every_game_once_and_says_so(
    tmp_path: Path, pg_url: str,
) -> None:
    ahead = {"LD_PRELOAD": _faketime(), "FAKETIME": f"+{SKEW:g}s",
             "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    common = ["--shared", "--lease", LEASE, "--log-level", "info"]
    servers = [Serve(tmp_path, free_port(), pg_url, 0, common),
               Serve(tmp_path, free_port(), pg_url, 1, common, env=ahead)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ports = [s._listening()[0]["port"] for s in servers]
        with grpc.insecure_channel(f"127.0.0.1:{ports[0]}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            bots = ["ka", "kb", "kc"]
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=admin_spec(
                "skew", bots, score_limit=40, reconnect_grace=10.0, games_per_pairing=8,
                concurrency=2, seed="skew")), metadata=AUTH, timeout=30).tournament.id
            events: list[tpb.WatchTournamentResponse] = []
            watcher = watch(stub, tid, events)
            targets = ",".join(f"127.0.0.1:{p}" for p in ports)
            for b in bots:
                with open(tmp_path / f"{b}.log", "wb") as err:
                    procs.append(subprocess.Popen(
                        [*sdk_bot("greedy"), "--target", targets, "--token", bot_token(b)],
                        stdout=subprocess.DEVNULL, stderr=err))
            watcher.join(240)
            assert not watcher.is_alive(), "the tournament did not finish"
        assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
        games = db_games(pg_url, tid)
        assert len(games) == 24 and all(v["status"] == "finished" for v in games.values())
        # No game was voided (before: the process ahead voided the other's games as
        # soon as their leases were renewed, and played them again), and every game was
        # played by one process: both played some.
        assert [k for k, v in games.items() if v["voided"]] == []
        owners = {str(v["owner"]) for v in games.values()}
        assert len(owners) == 2, owners
        with grpc.insecure_channel(f"127.0.0.1:{ports[1]}") as ch:
            st = tpb_grpc.TournamentServiceStub(ch).GetServerStatus(
                tpb.GetServerStatusRequest(), metadata=AUTH, timeout=10)
        assert st.clock_measured and abs(st.clock_offset - SKEW) < 1.0, st
    finally:
        stop_all(procs, servers)
    logs = [[json.loads(x) for x in s.err.read_text(encoding="utf-8").splitlines()
             if x.startswith("{")] for s in servers]
    skewed = [e for e in logs[1] if e["event"] == "clock_skew"]
    assert skewed and abs(float(skewed[0]["offset"]) - SKEW) < 1.0
    assert not any(e["event"] == "clock_skew" for e in logs[0])
    for log in logs:
        assert not any(e["event"] in ("game_result_dropped", "games_voided") for e in log)
