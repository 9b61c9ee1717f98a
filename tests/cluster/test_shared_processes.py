"""Several `chinchon serve --shared` processes on one PostgreSQL database play one
tournament together: every game exactly once, whichever process a client asks, and a
process killed (-9) mid-tournament or cut off from the database loses no result."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
from chinchon.engine import RuleSet, ShuffleSource, attempt_deal, new_game
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import StoreError, open_store

from tests.support.admin import hello
from tests.support.helpers import ADMIN, bot_token, sdk_bot
from tests.support.referee import stream_on_now
from tests.support.serve import db_games, free_port, watch
from tests.support.shared import AUTH, BOTS, LEASE, LIMIT, Shared, create
from tests.support.tournament import CLI, PLAYED, check_record
from tests.support.waits import until, until_async, until_sync
from tests.support.web import PACED_BOT


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    """A new database of the test session's PostgreSQL cluster."""
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def shared(tmp_path: Path, url: str, request: pytest.FixtureRequest) -> Iterator[Shared]:
    """``n`` processes, or ``(n, lease)``."""
    n, lease = request.param if isinstance(request.param, tuple) else (request.param, None)
    s = Shared(tmp_path, url, n, lease)
    try:
        yield s
    finally:
        s.close()


def check_all_played_once(url: str, tid: str, seed: str, total: int) -> dict[str, dict[str, object]]:
    """Every game of ``tid`` finished, played to its end from its own deal."""
    games = db_games(url, tid)
    assert len(games) == total
    assert Counter(v["status"] for v in games.values()) == {"finished": total}
    for k, v in games.items():
        rec = json.loads(str(v["record"]))
        assert rec["gameId"] == k and rec["result"]["termination"] in PLAYED
        check_record(rec)
        # Each attempt from its own deal (a voided game is dealt anew when played again).
        deal = attempt_deal(str(v["deal_id"]), int(str(v["voided"])))
        dealt = ShuffleSource(seed, deal).chance(new_game(RuleSet(score_limit=LIMIT)))
        assert rec["actions"][0]["deal"]["deck"] == [str(c) for c in dealt.deck]
    return games


def finished(url: str, tid: str) -> int:
    """How many games of ``tid`` the database holds finished."""
    return sum(v["status"] == "finished" for v in db_games(url, tid).values())


def bot_games(tmp: Path) -> int:
    """The games the SDK bot processes say they played (each prints it as it exits)."""
    n = 0
    for log in tmp.glob("s?.bot.log"):
        found = re.findall(r"^(\d+) games, ", log.read_text(encoding="utf-8"), re.M)
        n += sum(int(x) for x in found)
    return n


# chinchon serve's own lease (10 s), not the kill tests' 3 s: this test sees no game
# voided, and CI once saw a heartbeat on a busy machine come more than 3 s late.
@pytest.mark.parametrize(("shared", "per_pair"), [((2, 10.0), 10), ((3, 10.0), 34)],
                         indirect=["shared"], ids=["2-processes-60-games", "3-processes-204-games"])
def test_processes_share_a_tournament_and_play_every_game_once(
        shared: Shared, per_pair: int) -> None:
    total = 6 * per_pair
    ch, stub = shared.stub(0)
    with ch:
        tid = create(stub, list(BOTS), per_pair, "shared-seed")
    # The watch is on the last process: it hears every process's games.
    events: list[tpb.WatchTournamentResponse] = []
    ch, stub = shared.stub(len(shared.servers) - 1)
    with ch:
        watcher = watch(stub, tid, events)
        shared.launch(BOTS)
        watcher.join(240)
        assert not watcher.is_alive(), "the tournament did not finish"
        assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
        ended = Counter(e.game_id for e in events if e.HasField("result"))
        assert len(ended) == total and set(ended.values()) == {1}, ended.most_common(3)
        for e in events:
            if e.HasField("result"):
                assert e.result.termination in (g.TERMINATION_NORMAL, g.TERMINATION_CHINCHON)
    games = check_all_played_once(shared.url, tid, "shared-seed", total)
    assert all(v["voided"] == 0 for v in games.values())
    # Every process played a share, and asked anywhere, the answers are the same.
    owners = Counter(str(v["owner"]) for v in games.values())
    assert len(owners) == len(shared.servers), owners
    answers = []
    for i in range(len(shared.servers)):
        ch, stub = shared.stub(i)
        with ch:
            info = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=AUTH, timeout=10)
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=AUTH,
                                   timeout=30)
            answers.append((info.SerializeToString(deterministic=True),
                            st.SerializeToString(deterministic=True)))
            assert [(t.games_total, t.games_done) for t in info.tournaments] == [(total, total)]
    assert len(set(answers)) == 1
    # The bots were dismissed by every process, and together played each seat once.
    for p in shared.bots:
        assert p.wait(60) == 0
    assert bot_games(shared.tmp) == 2 * total


@pytest.mark.parametrize("shared", [2], indirect=True)
def test_a_process_killed_mid_tournament_leaves_its_games_to_the_other(shared: Shared) -> None:
    per_pair, seed = 8, "kill-shared"
    total = 6 * per_pair
    tid = shared.play(1, per_pair, seed)
    victim = shared.servers[0]
    victim_name = victim._listening()[0]["process"]
    survivor_name = shared.servers[1]._listening()[0]["process"]

    def mid() -> bool:
        games = list(db_games(shared.url, tid).values())
        playing = {v["owner"] for v in games if v["status"] == "running"}
        return finished(shared.url, tid) >= 6 and playing == {victim_name, survivor_name}

    def frozen_mid_game() -> bool:
        """Both processes playing, then the victim frozen (SIGSTOP) with a game running:
        what the store holds then is what the kill leaves (a frozen process finishes
        nothing). A victim caught between two games is let go and caught again."""
        if not mid():
            return False
        victim.proc.send_signal(signal.SIGSTOP)
        rows = db_games(shared.url, tid)
        if any(v["status"] == "running" and v["owner"] == victim_name for v in rows.values()):
            return True
        victim.proc.send_signal(signal.SIGCONT)
        return False

    until_sync(frozen_mid_game, "both processes playing", 120)
    before = db_games(shared.url, tid)
    victim.kill9()
    done_before = {k: v for k, v in before.items() if v["status"] == "finished"}
    lost = {k for k, v in before.items() if v["status"] == "running" and v["owner"] == victim_name}
    assert lost and done_before

    events = shared.watch_to_the_end(1, tid)
    assert events[-1].tournament.games_done == total
    after = check_all_played_once(shared.url, tid, seed, total)
    # Games finished before the kill are untouched, byte for byte.
    for k, v in done_before.items():
        assert after[k]["record"] == v["record"] and after[k]["voided"] == 0
    # The killed process's games in flight were voided (their leases ran out) and played
    # again from their deal by the other process; no other game was voided.
    assert {k for k, v in after.items() if v["voided"]} == lost
    assert all(after[k]["voided"] == 1 and after[k]["owner"] == survivor_name for k in lost)
    ended = Counter(e.game_id for e in events if e.HasField("result"))
    assert set(ended.values()) <= {1} and not set(ended) & set(done_before)


@pytest.mark.parametrize("shared", [1, 2], indirect=True, ids=["alone", "with-another"])
def test_a_process_cut_off_from_the_database_loses_no_result(shared: Shared) -> None:
    """For a few seconds every connection of process 0 is cut as soon as it is made
    (PostgreSQL ends its sessions): it keeps its results, writes them when the database
    is back, and the tournament ends with every game played once."""
    per_pair, seed = 8, "cut-shared"
    total = 6 * per_pair
    tid = shared.play(0, per_pair, seed)
    target = shared.servers[0]
    until_sync(lambda: finished(shared.url, tid) >= 4, "progress", 120)
    cut = 0
    with psycopg.connect(shared.url, autocommit=True) as admin:
        app = f"chinchon-referee pid {target.proc.pid}"
        deadline = 3.0  # seconds of cuts, on the database's own clock
        (start,), = admin.execute("SELECT extract(epoch FROM clock_timestamp())").fetchall()
        while True:
            (now,), = admin.execute("SELECT extract(epoch FROM clock_timestamp())").fetchall()
            if float(now) - float(start) > deadline:
                break
            cut += admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = %s", (app,)).fetchall()[0][0]
    assert cut >= 2
    shared.watch_to_the_end(0, tid)
    check_all_played_once(shared.url, tid, seed, total)
    assert target.proc.poll() is None  # it carried on
    for p in shared.bots:
        assert p.wait(60) == 0
    # Each game was played once, but those voided: a game stopped when the process
    # could not renew its lease, or whose lease ran out (its result was then dropped),
    # was played again, from its deal, and recorded once.
    voided = sum(int(str(v["voided"])) for v in db_games(shared.url, tid).values())
    assert bot_games(shared.tmp) == 2 * (total + voided)


def http(url: str) -> tuple[int, str, str]:
    """GET ``url`` without following a redirect: (status, Location, body)."""
    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with urllib.request.build_opener(Keep).open(url, timeout=10) as r:
            return r.status, "", r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location", ""), e.read().decode()


@pytest.mark.parametrize("shared", [2], indirect=True)
def test_the_web_view_of_any_process_shows_the_games_of_every_process(shared: Shared) -> None:
    """Bots connected to process 1 only: their games are played there; process 0's web
    view lists them as running elsewhere, and sends a watcher to process 1's."""
    ch, stub = shared.stub(0)
    with ch:
        tid = create(stub, ["wa", "wb"], 3, "web-shared")
    port = shared.ports[1]
    for b in ("wa", "wb"):
        with open(shared.tmp / f"{b}.log", "wb") as err:
            shared.bots.append(subprocess.Popen(
                [*sdk_bot(PACED_BOT), "--target", f"127.0.0.1:{port}", "--token", bot_token(b)],
                stdout=subprocess.DEVNULL, stderr=err))
    a, b = shared.web(0), shared.web(1)

    def elsewhere() -> list[dict[str, object]]:
        status, _, body = http(f"{a}/api/t/{tid}")
        assert status == 200
        return [g for g in json.loads(body)["running"] if g.get("elsewhere")]

    seen: list[tuple[str, dict[str, object]]] = []

    def followed() -> bool:
        """A game running elsewhere: process 0 sends its page and its table to process
        1, which shows the table (False if each game listed ended meanwhile)."""
        for running in elsewhere():
            gid = str(running["id"])
            page = http(f"{a}/g/{gid}")
            table = http(f"{a}/api/g/{gid}/table")
            if page[0] != 307 or table[0] != 307:
                continue  # it ended meanwhile
            assert page[1] == f"{b}/g/{gid}" and table[1] == f"{b}/api/g/{gid}/table"
            status, _, body = http(table[1])
            if status == 200:
                seen.append((gid, json.loads(body)))
                return True
        return False

    until_sync(followed, "a game of process 1 followed from process 0's web view", 90)

    def home_bots() -> list[tuple[str, int]]:
        home = json.loads(http(f"{a}/api/home")[2])
        return [(str(x["name"]), int(x["streams"])) for x in home["bots"]]

    # Process 0's home page counts the bots' streams on process 1.
    until_sync(lambda: home_bots() == [("wa", 1), ("wb", 1)], "the bots on process 0's home",
               10, detail=home_bots)
    gid, table = seen[0]
    assert [s["name"] for s in table["seats"]] == db_games(shared.url, tid)[gid]["players"]
    ch, stub = shared.stub(1)
    with ch:
        until_sync(lambda: stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=AUTH,
                                                timeout=10).tournaments[0].status
                   == tpb.TOURNAMENT_STATUS_FINISHED, "the tournament finished", 120)
    # The same tournament page from either process once it is over. A web view learns
    # that its process's last game ended from that process's live feed, a moment after
    # the database has it (a CI run read process 1's page in between): wait for both.
    def pages_now() -> list[dict[str, object]]:
        return [json.loads(http(f"{w}/api/t/{tid}")[2]) for w in (a, b)]

    until_sync(lambda: all(p["running"] == [] for p in pages_now()),
               "no game running on either web view", 30,
               detail=lambda: [p["running"] for p in pages_now()])
    pages = pages_now()
    assert pages[0]["progress"] == pages[1]["progress"]
    assert all(p["running"] == [] for p in pages)
    assert pages[0]["standings"] == pages[1]["standings"]


@pytest.mark.parametrize("shared", [2], indirect=True)
async def test_a_token_rotated_on_one_process_ends_the_streams_on_every_process(
        shared: Shared) -> None:
    """Bots are registered, rotated and revoked through process 0: process 1 takes each
    change at once (the bus), ending the bot's streams there too."""
    a, b = (f"127.0.0.1:{p}" for p in shared.ports)
    ch, stub = shared.stub(0)
    with ch:
        added = stub.AddBot(tpb.AddBotRequest(name="rt"), metadata=AUTH, timeout=10)
        # Known at once on process 1 (told through the bus, read at each heartbeat too).
        await until_async(lambda: stream_on_now(b, added.token),
                          "the new bot admitted by process 1", 10)
        streams = [await hello(a, added.token), await hello(b, added.token)]

        def connected() -> list[tuple[str, int, int, int]]:
            bots = stub.ListConnectedBots(tpb.ListConnectedBotsRequest(), metadata=AUTH,
                                          timeout=10).bots
            return [(x.name, x.streams, x.idle, x.processes) for x in bots]

        # Either process counts the streams on both (the other's, as of its last heartbeat).
        await until(lambda: connected() == [("rt", 2, 2, 2)], "rt's streams on both processes",
                    10, detail=connected)
        rotated = stub.RotateBotToken(tpb.RotateBotTokenRequest(name="rt"), metadata=AUTH,
                                      timeout=10)
        for call in streams:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call.read()
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "rotated" in (err.value.details() or "")
        await until_async(lambda: stream_on_now(b, rotated.token),
                          "the new token works on process 1", 10)
        assert not await stream_on_now(b, added.token)
        stream = await hello(b, rotated.token)
        stub.RevokeBot(tpb.RevokeBotRequest(name="rt"), metadata=AUTH, timeout=10)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stream.read()
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert not await stream_on_now(b, rotated.token)


def test_a_database_is_shared_or_held_alone_never_both(url: str, tmp_path: Path) -> None:
    first = open_store(url, shared=True)
    second = open_store(url, shared=True)
    try:
        with pytest.raises(StoreError, match="chinchon serve --shared"):
            open_store(url, exclusive=True)
    finally:
        first.close()
        second.close()
    alone = open_store(url, exclusive=True)
    try:
        with pytest.raises(StoreError, match="holds it alone"):
            open_store(url, shared=True)
    finally:
        alone.close()
    with pytest.raises(StoreError, match="PostgreSQL"):
        open_store(str(tmp_path / "x.sqlite3"), shared=True)
    res = subprocess.run(
        ["chinchon", "serve", "--shared", "--db", str(tmp_path / "x.sqlite3"),
         "--admin-token", ADMIN], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--shared: processes share a PostgreSQL" in res.stderr


def two_free_ports() -> int:
    """A port P such that P and P + 1 are both free now."""
    for _ in range(50):
        p = free_port()
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p + 1))
            except OSError:
                continue
        return p
    raise AssertionError("no two free ports in a row")


def test_workers_are_supervised_processes_that_share_the_work(tmp_path: Path, url: str) -> None:
    """`serve --shared --workers 2`: two processes on two ports in a row play a
    tournament together; one killed with -9 is started again, on its port, and the
    tournament ends with every game played once; SIGTERM ends them all, exit 0."""
    port = two_free_ports()
    out = tmp_path / "workers.out"
    with open(out, "wb") as o, open(tmp_path / "workers.err", "wb") as e:
        sup = subprocess.Popen(
            [*CLI, "serve", "--shared", "--workers", "2", "--db", url, "--lease", str(LEASE),
             "--address", f"127.0.0.1:{port}", "--admin-token", ADMIN,
             "--log-level", "warning"], stdout=o, stderr=e)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        def listening() -> list[dict[str, object]]:
            lines = out.read_text(encoding="utf-8").splitlines()
            return [json.loads(x) for x in lines if '"listening"' in x]

        until_sync(lambda: len(listening()) == 2, "two workers listening", 120)
        assert sorted(int(str(x["port"])) for x in listening()) == [port, port + 1]
        with grpc.insecure_channel(f"127.0.0.1:{port + 1}") as ch:
            tid = create(tpb_grpc.TournamentServiceStub(ch), list(BOTS), 6, "workers-seed")
        targets = f"127.0.0.1:{port},127.0.0.1:{port + 1}"
        for b, kind in BOTS.items():
            bots.append(subprocess.Popen(
                [*sdk_bot(kind), "--target", targets, "--token", bot_token(b)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        until_sync(lambda: finished(url, tid) >= 4, "progress", 120)
        victim = next(x for x in listening() if x["port"] == port)
        os.kill(int(str(victim["pid"])), signal.SIGKILL)
        until_sync(lambda: len(listening()) == 3, "the killed worker started again", 120)
        assert listening()[-1]["port"] == port and listening()[-1]["pid"] != victim["pid"]
        assert '"worker_died"' in out.read_text(encoding="utf-8")
        until_sync(lambda: all(v["status"] == "finished" for v in db_games(url, tid).values()),
                   "every game finished", 180)
        check_all_played_once(url, tid, "workers-seed", 6 * 6)
    finally:
        for p in bots:
            p.kill()
            p.wait()
        sup.send_signal(signal.SIGTERM)
        code = sup.wait(30)
    assert code == 0, (tmp_path / "workers.err").read_text(encoding="utf-8")[-2000:]
    # Its workers are gone too.
    for x in [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()
              if '"listening"' in x]:
        with pytest.raises(ProcessLookupError):
            os.kill(int(str(x["pid"])), 0)


def _port_below_a_busy_one() -> tuple[socket.socket, int]:
    """A listening socket on port P + 1 and the port P, free a moment ago (another
    test's process may hold the port next to a random one: CI saw worker 0 fail too)."""
    for _ in range(50):
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1] - 1
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            busy.close()
            continue
        finally:
            probe.close()
        return busy, port
    raise AssertionError("no free port found below a busy one in 50 tries")


def test_workers_need_a_shared_database_and_stop_on_a_configuration_error(
        tmp_path: Path, url: str) -> None:
    res = subprocess.run([*CLI, "serve", "--workers", "2", "--db", url], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and "--workers 2: 1 to 256, with --shared" in res.stderr
    busy, port = _port_below_a_busy_one()  # worker 1's port is taken, worker 0's free
    try:
        res = subprocess.run(
            [*CLI, "serve", "--shared", "--workers", "2", "--db", url, "--admin-token", ADMIN,
             "--address", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60)
    finally:
        busy.close()
    assert res.returncode == 2, res.stderr[-2000:]
    assert '"worker_failed"' in res.stdout
    assert f"--address 127.0.0.1:{port + 1}: cannot listen there" in res.stderr, res.stderr


@pytest.mark.parametrize("shared", [2], indirect=True)
def test_a_watcher_shows_what_the_store_holds_after_its_process_lost_the_bus(
        shared: Shared) -> None:
    """The bots play on process 0 only; a watcher follows on process 1, whose connection
    listening to the bus is cut again and again while games end (as in a short outage of
    the database: NOTIFYs sent meanwhile never reach it). Before, the watcher missed
    those games' ends and its last games_done fell short of the store's; now process 1
    reads from the store what it missed, and the watcher hears every game's end, once,
    and ends with the store's count."""
    per_pair, seed = 4, "gap-shared"
    total = 6 * per_pair
    ch, stub = shared.stub(0)
    with ch:
        tid = create(stub, list(BOTS), per_pair, seed)
    events: list[tpb.WatchTournamentResponse] = []
    ch1, stub1 = shared.stub(1)
    with ch1:
        watcher = watch(stub1, tid, events)
        port0 = shared.ports[0]
        for b, kind in BOTS.items():
            with open(shared.tmp / f"{b}.bot.log", "wb") as err:
                shared.bots.append(subprocess.Popen(
                    [*sdk_bot(kind), "--target", f"127.0.0.1:{port0}", "--token", bot_token(b)],
                    stdout=subprocess.DEVNULL, stderr=err))
        until_sync(lambda: finished(shared.url, tid) >= 2, "progress", 120)
        listener = f"chinchon-referee pid {shared.servers[1].proc.pid} bus listener"
        start, cut = finished(shared.url, tid), 0
        with psycopg.connect(shared.url, autocommit=True) as admin:
            def cutting() -> bool:
                nonlocal cut
                cut += admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = %s", (listener,)).fetchall()[0][0]
                return finished(shared.url, tid) >= min(total, start + 3)

            until_sync(cutting, "games to end while the bus is cut", 120)
        assert cut >= 1
        watcher.join(240)
        assert not watcher.is_alive(), "the tournament did not finish"
    assert events[-1].tournament.status == tpb.TOURNAMENT_STATUS_FINISHED
    ended = Counter(e.game_id for e in events if e.HasField("result"))
    assert len(ended) == total and set(ended.values()) == {1}, ended.most_common(3)
    assert max(e.tournament.games_done for e in events) == total
    check_all_played_once(shared.url, tid, seed, total)
