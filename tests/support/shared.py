"""Several `chinchon serve --shared` processes on one PostgreSQL database, with their bots."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from tests.support.helpers import ADMIN, bot_token, sdk_bot
from tests.support.serve import Serve, admin_spec, free_port, stop_all, watch


class Shared:
    """``n`` referee processes sharing the database ``url``, and the bots' processes:
    each bot has one stream on every process. ``lease``: :data:`LEASE` by default, short
    for the tests that kill a process; a test that must see no game voided takes
    chinchon serve's own (10 s): on a busy machine a heartbeat can be late by seconds."""

    def __init__(self, tmp: Path, url: str, n: int, lease: float | None = None) -> None:
        self.tmp, self.url = tmp, url
        lease = LEASE if lease is None else lease
        # Logged at info level: each process's err file tells what it did.
        self.servers = [Serve(tmp, free_port(), url, i, ["--shared", "--lease", str(lease),
                                                         "--log-level", "info",
                                                         "--http", "127.0.0.1:0"])
                        for i in range(n)]
        self.bots: list[subprocess.Popen[bytes]] = []

    @property
    def ports(self) -> list[int]:
        return [s._listening()[0]["port"] for s in self.servers if s.proc.poll() is None]

    def web(self, i: int) -> str:
        """The web view's URL of process ``i``."""
        lines = self.servers[i].out.read_text(encoding="utf-8").splitlines()
        return next(str(json.loads(x)["url"]) for x in lines if '"web"' in x).rstrip("/")

    def stub(self, i: int) -> tuple[grpc.Channel, tpb_grpc.TournamentServiceStub]:
        ch = grpc.insecure_channel(f"127.0.0.1:{self.servers[i]._listening()[0]['port']}")
        return ch, tpb_grpc.TournamentServiceStub(ch)

    def launch(self, bots: dict[str, str]) -> None:
        """One SDK bot process per bot, with a stream to every process (one address
        each: ``--target a,b,c``)."""
        targets = ",".join(f"127.0.0.1:{p}" for p in self.ports)
        for b, kind in bots.items():
            with open(self.tmp / f"{b}.bot.log", "wb") as err:
                self.bots.append(subprocess.Popen(
                    [*sdk_bot(kind), "--target", targets, "--token", bot_token(b)],
                    stdout=subprocess.DEVNULL, stderr=err,
                    env=dict(os.environ, PYTHONUNBUFFERED="1")))

    def play(self, via: int, per_pair: int, seed: str) -> str:
        """Declare a tournament of BOTS through process ``via`` and start the bots: its id."""
        ch, stub = self.stub(via)
        with ch:
            tid = create(stub, list(BOTS), per_pair, seed)
        self.launch(BOTS)
        return tid

    def watch_to_the_end(self, via: int, tid: str) -> list[tpb.WatchTournamentResponse]:
        """Every event of ``tid`` from process ``via`` until it is finished."""
        events: list[tpb.WatchTournamentResponse] = []
        ch, stub = self.stub(via)
        with ch:
            watcher = watch(stub, tid, events)
            watcher.join(240)
            assert not watcher.is_alive(), "the tournament did not finish"
        assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
        return events

    def close(self) -> None:
        stop_all(self.bots, self.servers)


#: A short lease: a killed process's games are played again within seconds.
LEASE = 3.0


def create(stub: tpb_grpc.TournamentServiceStub, bots: list[str], per_pair: int,
           seed: str) -> str:
    spec = admin_spec("shared cup", bots, score_limit=LIMIT, reconnect_grace=10.0,
                      games_per_pairing=per_pair, concurrency=4, seed=seed)
    return str(stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec), metadata=AUTH,
                                     timeout=30).tournament.id)


BOTS = {"sa": "greedy", "sb": "random", "sc": "greedy", "sd": "random"}


AUTH = (("authorization", f"Bearer {ADMIN}"),)


#: Short games (a player is out past 20 points): a few hundred games in the time.
LIMIT = 20
