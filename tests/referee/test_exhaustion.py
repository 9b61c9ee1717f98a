"""One bot must not be able to exhaust the server: what a hostile bot sends costs the
referee a bounded amount of memory, and its streams and practice sessions are limited.

Real servers on port 0; the hostile bot is a raw ``grpc.aio`` client in the test process
that writes PlayRequest bytes of its own making (padded with unknown fields, quoting 60 KB
of text where a card goes).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import delimited, remembered_bytes, varint
from chinchon_referee.config import Limits, Policies, RefereeConfig
from chinchon_referee.logs import configure
from chinchon_referee.referee.clip import MARK_SPACE, MAX_QUOTED, clip
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import GameRow, SqliteStore, TournamentRow
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fixture_types import SpawnChild, StartServer
from tests.support.helpers import ROOT, bot_token, spec
from tests.support.waits import until

PLAY = "/chinchon.v1.RefereeService/Play"



class RawStream:
    """A Play stream whose requests are written as bytes (anything a bot may send)."""

    def __init__(self, target: str, token: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        method = self.channel.stream_stream(
            PLAY, request_serializer=None, response_deserializer=pb.PlayResponse.FromString)
        self.call = method(metadata=(("authorization", f"Bearer {token}"),))

    async def hello(self, hello: pb.Hello) -> pb.PlayResponse:
        await self.call.write(pb.PlayRequest(hello=hello).SerializeToString())
        return await asyncio.wait_for(self.call.read(), 30)

    async def read(self) -> Any:
        return await asyncio.wait_for(self.call.read(), 60)

    async def answer(self, request_id: int, action: bytes) -> None:
        """Answer ``request_id`` with ``action``, the bytes of a chinchon.v1.Action."""
        reply = b"\x08" + varint(request_id) + delimited(2, action)
        await self.call.write(delimited(2, reply))

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()


async def practise(
    stream: RawStream, answers: int,
    action: Callable[[pb.ActionRequest, int], bytes],
    seen: Callable[[pb.PlayResponse], None] = lambda m: None,
) -> None:
    """Answer ``answers`` action requests of a practice session with ``action(request,
    n)`` (n counts the answers)."""
    n = 0
    while n < answers:
        msg = await stream.read()
        assert msg is not grpc.aio.EOF, f"the stream ended after {n} answers"
        seen(msg)
        if msg.WhichOneof("kind") == "action_request":
            await stream.answer(msg.action_request.request_id, action(msg.action_request, n))
            n += 1


def _practice(opponent: str = "greedy", games: int = 100) -> pb.Hello:
    return pb.Hello(client="hostile", practice=pb.PracticeRequest(opponent=opponent, games=games))


#: The ``raw_streams`` fixture: ``raw_streams(server, bot)`` opens a RawStream as ``bot``.
OpenStream = Callable[[RunningServer, str], RawStream]


@pytest.fixture
async def raw_streams(servers: StartServer) -> AsyncIterator[OpenStream]:
    """A factory of RawStreams; every one is closed after the test, before the servers
    stop."""
    opened: list[RawStream] = []

    def _open(server: RunningServer, bot: str) -> RawStream:
        stream = RawStream(server.target, bot_token(bot))
        opened.append(stream)
        return stream

    yield _open
    for stream in opened:
        await stream.close()


@pytest.fixture
def traced() -> Iterator[None]:
    """Python's allocations traced (tracemalloc) during the test."""
    tracemalloc.start()
    yield
    tracemalloc.stop()


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """The referee's logs, at info level as JSON lines, into a string buffer during the
    test; to stderr again afterwards."""
    logs = io.StringIO()
    configure("info", "json", logs)
    yield logs
    configure("info", "json")


# -- 3. the decoded-answer cache --------------------------------------------------------------


@pytest.mark.parametrize("server", [["hostile"]], indirect=True)
@pytest.mark.usefixtures("traced")
async def test_answers_padded_with_unknown_fields_do_not_grow_the_server(
    server: RunningServer, raw_streams: OpenStream,
) -> None:
    """1,500 legal answers, each padded with a unique 40 KB unknown field (the referee
    must accept them: unknown fields are how protobuf stays compatible), leave neither
    the decoding cache nor the process's Python heap bigger by more than a few MiB
    (before: +60 MiB, never freed)."""

    def padded(req: pb.ActionRequest, n: int) -> bytes:
        pad = n.to_bytes(4, "big") * 10_000  # 40 KB, different for every answer
        return req.legal_actions[0].SerializeToString() + delimited(1000, pad)

    stream = raw_streams(server, "hostile")
    assert (await stream.hello(_practice())).WhichOneof("kind") == "welcome"
    await practise(stream, 20, padded)  # warm up: caches of short things filled
    gc.collect()
    cache0, heap0 = remembered_bytes(), tracemalloc.get_traced_memory()[0]
    await practise(stream, 1500, padded)
    gc.collect()
    cache_growth = remembered_bytes() - cache0
    heap_growth = tracemalloc.get_traced_memory()[0] - heap0
    assert cache_growth < 64 * 1024, cache_growth
    assert heap_growth < 8 * 1024 * 1024, f"the heap grew by {heap_growth / 2**20:.1f} MiB"


# -- 4. incidents and logs ----------------------------------------------------------------------


@pytest.mark.parametrize("server", [["hostile"]], indirect=True)
async def test_a_bots_huge_text_is_clipped_in_incidents_logs_and_replies(
    server: RunningServer, raw_streams: OpenStream, json_logs: io.StringIO,
) -> None:
    """A bot that names a 60 KB 'card' again and again: the referee keeps, logs and
    sends back at most MAX_QUOTED characters of it each time (before: all 60 KB, kept
    in the incident list and written to the log at info level)."""
    junk = "7" * 60_000
    replies: list[str] = []

    def huge(req: pb.ActionRequest, n: int) -> bytes:
        return g.Action(discard=g.Discard(card=junk)).SerializeToString()

    def seen(msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("kind") == "action_rejected":
            replies.append(msg.action_rejected.error.message)

    stream = raw_streams(server, "hostile")
    await stream.hello(_practice())
    await practise(stream, 60, huge, seen)
    incidents = list(server.referee.incidents)
    illegal = [i for i in incidents if i["kind"] == "illegal"]
    assert len(illegal) >= 50
    for i in illegal:
        assert i["code"] == "ERROR_CODE_MALFORMED"
        assert i["message"].startswith("'7777") and "characters left out" in i["message"]
        assert i["message"].endswith("or JK1/JK2 for a joker")  # the explanation is kept
        assert len(i["message"]) <= MAX_QUOTED + MARK_SPACE
    assert len(replies) >= 50 and all(len(m) <= MAX_QUOTED + MARK_SPACE for m in replies)
    lines = json_logs.getvalue().splitlines()
    assert any("illegal_action" in ln for ln in lines)
    assert max(map(len, lines)) < 2000
    assert all(junk[:1000] not in ln for ln in lines)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=2000) | st.text(min_size=200, max_size=300),
       limit=st.integers(2, 400))
def test_clip_is_bounded_idempotent_and_keeps_both_ends(text: str, limit: int) -> None:
    out = clip(text, limit)
    assert len(out) <= limit + MARK_SPACE
    assert clip(out, limit) == out
    if len(text) <= limit + MARK_SPACE:
        assert out == text
    else:
        assert f"({len(text) - limit} characters left out)" in out
        head, _, tail = out.partition("… (")
        assert text.startswith(head) and text.endswith(tail.partition(") …")[2])
        assert len(head) + len(tail.partition(") …")[2]) == limit


# -- 5. streams and practice sessions per bot and in all --------------------------------------


async def _refused(stream: RawStream) -> grpc.aio.AioRpcError:
    """The status that ends ``stream`` (which must end with an error)."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        while True:
            msg = await stream.read()
            assert msg is not grpc.aio.EOF, "the stream ended without an error status"
    return err.value


async def test_open_streams_are_capped_per_bot_and_in_all_naming_the_limit(
    servers: StartServer, raw_streams: OpenStream,
) -> None:
    limits = Limits(max_streams_per_bot=2, max_streams=3)

    server = await servers(["a", "b", "c"], RefereeConfig(limits=limits))
    streams: list[RawStream] = []

    async def open_(bot: str) -> RawStream:
        s = raw_streams(server, bot)
        streams.append(s)
        # A refused stream may end before its hello is written: the status is read
        # from the stream then (_refused), not from the write.
        with contextlib.suppress(grpc.aio.AioRpcError):
            await s.call.write(pb.PlayRequest(hello=pb.Hello(client="t")).SerializeToString())
        return s

    a1, _ = await open_("a"), await open_("a")
    for s in streams:
        assert (await s.read()).WhichOneof("kind") == "welcome"
    err = await _refused(await open_("a"))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_streams_per_bot" in err.details() and "at most 2" in err.details()
    b = await open_("b")
    assert (await b.read()).WhichOneof("kind") == "welcome"
    err = await _refused(await open_("c"))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_streams" in err.details() and "in all" in err.details()
    # A stream that ends gives its place back.
    await a1.close()
    await until(lambda: server.referee.streams.in_all == 2, "the stream to close")
    c = await open_("c")
    assert (await c.read()).WhichOneof("kind") == "welcome"


async def test_a_stream_over_the_cap_that_writes_its_hello_at_once_reads_the_refusal(
    servers: StartServer,
) -> None:
    """A refused stream's first message is read (a second at most) before the refusal,
    as for a refused token: a client that writes its hello at once always reads
    RESOURCE_EXHAUSTED naming the limit, never an error of the transport."""
    server = await servers(["a"], RefereeConfig(limits=Limits(max_streams_per_bot=1)))
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        md = (("authorization", f"Bearer {bot_token('a')}"),)
        first = stub.Play(metadata=md)
        await first.write(pb.PlayRequest(hello=pb.Hello(client="t")))
        assert (await first.read()).WhichOneof("kind") == "welcome"
        for _ in range(30):
            extra = stub.Play(metadata=md)
            # A large hello: its write is still going when an early refusal ends the call.
            await extra.write(pb.PlayRequest(hello=pb.Hello(client="t" * 60_000)))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await extra.read()
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.value
            assert "max_streams_per_bot" in (err.value.details() or "")
        first.cancel()


async def test_practice_sessions_are_capped_per_bot_and_in_all_naming_the_limit(
    servers: StartServer, raw_streams: OpenStream,
) -> None:
    limits = Limits(max_practice_per_bot=1, max_practice=2)
    config = RefereeConfig(limits=limits, policies=Policies(reconnect_grace=1.0))
    hello = pb.Hello(client="t", practice=pb.PracticeRequest(opponent="greedy", games=5))
    hello.practice.time_control.per_move.FromSeconds(600)  # nobody answers: no timeouts

    server = await servers(["a", "b", "c"], config)

    async def practice(bot: str) -> RawStream:
        s = raw_streams(server, bot)
        assert (await s.hello(hello)).WhichOneof("kind") == "welcome"
        return s

    async def first_game(s: RawStream) -> pb.GameStarted:
        while True:
            msg = await s.read()
            if msg.WhichOneof("kind") == "game_started":
                return msg.game_started

    a = await practice("a")
    await first_game(a)
    again = await practice("a")
    msg = await again.read()
    assert msg.error.code == pb.ERROR_CODE_BAD_REQUEST
    assert "max_practice_per_bot" in msg.error.message
    err = await _refused(again)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_practice_per_bot" in err.details()
    await first_game(await practice("b"))
    c = await practice("c")
    msg = await c.read()
    assert msg.error.code == pb.ERROR_CODE_BAD_REQUEST
    assert "(limit max_practice)" in msg.error.message and "in all" in msg.error.message
    assert (await _refused(c)).code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # A bot that comes back to its session takes its seat over: not a new one.
    await a.close()
    back = await practice("a")
    assert (await first_game(back)).resumed
    assert server.referee.practice_sessions.in_all == 2
    # A session that ends gives its place back.
    await back.close()
    await until(lambda: server.referee.practice_sessions.in_all == 1,
                 "a's session to end (forfeit after the reconnect grace)")
    await first_game(await practice("c"))


@pytest.mark.parametrize("field", ["max_streams_per_bot", "max_streams", "max_practice_per_bot",
                                   "max_practice", "practice_records", "practice_record_days"])
def test_a_bad_limit_is_refused_naming_it(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: -1})


# -- 5. practice records kept for a bounded time and number -----------------------------------


def test_chinchon_serve_keeps_only_the_newest_practice_records(tmp_path: Path) -> None:
    """``chinchon serve --practice-records 3``: after a practice session of 5 games the
    database holds the records of the last 3 (before: every practice game, forever)."""
    from tests.support.serve import ALICE, sdk, serve

    with serve(tmp_path, "--practice-records", "3") as (proc, port):
        res = sdk(f"127.0.0.1:{port}", ALICE, "--games", "5")
        assert res.returncode == 0, res.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    rows = sqlite3.connect(tmp_path / "ref.sqlite3").execute(
        "SELECT id FROM games ORDER BY finished").fetchall()
    assert [r[0].rsplit("-", 1)[1] for r in rows] == ["3", "4", "5"]
    # Started again with a shorter keep, the server prunes at once.
    with serve(tmp_path, "--practice-records", "1") as (proc, port):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    rows = sqlite3.connect(tmp_path / "ref.sqlite3").execute("SELECT id FROM games").fetchall()
    assert [r[0].rsplit("-", 1)[1] for r in rows] == ["5"]


def test_pruning_deletes_old_and_surplus_practice_games_never_tournament_ones(
    tmp_path: Path,
) -> None:
    store = SqliteStore(str(tmp_path / "s.sqlite3"))
    try:
        store.create_tournament(
            TournamentRow("t", "t", {}, "running", time.time()),
            [GameRow("t-1", "t", 1, ["a", "b"], "d")])
        store.finish_game(GameRow("t-1", "t", 1, ["a", "b"], "d", result=None, record={},
                                  stats=[]))
        for i in range(5):
            store.finish_game(GameRow(f"p-{i}", None, 0, ["a", "b"], "d", result=None,
                                      record={}, stats=[]))

        def ids() -> list[str]:  # the database as another reader sees it
            with contextlib.closing(sqlite3.connect(tmp_path / "s.sqlite3")) as db:
                return [r[0] for r in db.execute("SELECT id FROM games ORDER BY rowid")]

        assert store.prune_games(keep=3, older_than=0) == 2
        assert ids() == ["t-1", "p-2", "p-3", "p-4"]
        assert store.prune_games(keep=100, older_than=time.time() + 1) == 3
        assert ids() == ["t-1"]
    finally:
        store.close()


def test_chinchon_serve_refuses_a_bad_limit_naming_it(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--db",
         str(tmp_path / "x.sqlite3"), "--admin-token", "a", "--max-practice", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert res.returncode == 2
    assert "max_practice must be at least 1" in res.stderr


# -- 5. a practice flood does not delay other games --------------------------------------------

LOAD_BOTS = str(ROOT / "tests" / "bots" / "load_bots.py")


def _p99(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


async def test_eight_hostile_practice_sessions_do_not_slow_an_honest_game(
    servers: StartServer, children: SpawnChild,
) -> None:
    """An honest bot plays games against a house bot (as in a tournament) and times
    each round trip on its own clock: from writing an answer to reading the next
    request. Meanwhile 8 hostile bots (8 tokens, one process at a lower priority:
    they stand for bots on other machines) each run a practice session against the
    strong house bot, answering every request at once; the test switches them on and
    off in short alternating phases, so that whatever else loads this machine weighs
    on both sides alike. The honest bot's p99 with the flood stays within twice its
    p99 without (1.5 ms at least: an idle machine's microseconds are no measure).
    Before: 8 sessions made the p99 7 to 10 times longer (CPU-heavy house bots, records
    converted and practice steps all on the referee's event loop). A round that misses
    (a busy machine) is measured again, three rounds at most."""
    names = ["honest"] + [f"hostile{i}" for i in range(8)]
    phases, per_phase, skip = 16, 100, 10

    server = await servers(names)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    honest = await children(
        [sys.executable, LOAD_BOTS, "honest", "--target", server.target,
         "--token", bot_token("honest")], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env)
    tokens = [a for n in names[1:] for a in ("--token", bot_token(n))]
    hostile = await children(
        [sys.executable, LOAD_BOTS, "hostile", "--target", server.target, *tokens,
         "--opponent", "strong"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert hostile.proc.stdin is not None
    stdin = hostile.proc.stdin

    async def games() -> None:
        k = 0
        while True:
            k += 1
            await server.referee.play(spec(f"honest-{k}", ["honest", "house:greedy"]))

    async def switch(on: bool) -> None:
        stdin.write(b"on\n" if on else b"off\n")
        await stdin.drain()

    def rtts() -> list[float]:
        return [float(ln.split()[1]) for ln in honest.out if ln.startswith("rtt ")]

    def answered() -> int:
        got = [int(ln.split()[1]) for ln in hostile.out if ln.startswith("answered ")]
        return got[-1] if got else 0

    player = asyncio.ensure_future(games())
    rounds: list[tuple[float, float, int]] = []
    try:
        await until(lambda: sum(c.bot.startswith("hostile")
                                 for c in server.referee.connections) == 8,
                     "the 8 hostile streams")
        # Warm up: every session playing, the house worker started.
        await switch(True)
        while answered() < 200:
            stdin.write(b"count\n")
            await stdin.drain()
            n = len(hostile.out)
            await until(lambda n=n: len(hostile.out) > n, "the hostile count", timeout=120)
        for _ in range(3):
            samples: dict[bool, list[float]] = {False: [], True: []}
            before = answered()
            for phase in range(phases):
                on = phase % 2 == 1
                await switch(on)
                base = len(rtts())
                await until(lambda base=base: len(rtts()) >= base + skip + per_phase,
                             "the honest bot's answers", timeout=120)
                samples[on] += rtts()[base + skip:base + skip + per_phase]
            await switch(False)
            await until(lambda before=before: answered() > before, "the hostile count")
            off, on_ = _p99(samples[False]), _p99(samples[True])
            rounds.append((off, on_, answered() - before))
            if on_ <= 2 * max(off, 0.0015):
                break
        assert not [ln for ln in hostile.out if ln.startswith(("ended", "error"))], \
            hostile.out[-5:]
    finally:
        player.cancel()  # the honest games (the fixtures end the processes and server)
    off, on, flood = rounds[-1]
    report = ", ".join(f"p99 {a * 1e3:.2f} ms without, {b * 1e3:.2f} ms with ({n} hostile "
                       "answers)" for a, b, n in rounds)
    print(report)
    assert on <= 2 * max(off, 0.0015), report
    assert flood >= 40, f"the hostile bots hardly played: {report}"


@pytest.mark.parametrize("server", [["a"]], indirect=True)
async def test_practice_against_strong_goes_on_when_its_worker_process_dies(
    server: RunningServer, raw_streams: OpenStream,
) -> None:
    """The strong house bot decides in a worker process; if that process dies, the
    games go on: the decision asked of it is made inline, the next ones by a new
    worker."""

    stream = raw_streams(server, "a")
    ended: list[pb.GameEnded] = []

    def seen(msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("kind") == "game_ended":
            ended.append(msg.game_ended)

    def first(req: pb.ActionRequest, n: int) -> bytes:
        return req.legal_actions[0].SerializeToString()

    await stream.hello(_practice("strong", games=3))
    await practise(stream, 30, first, seen)
    worker = server.referee.worker(practice=True)
    pid = worker.pid
    assert pid is not None  # running
    os.kill(pid, signal.SIGKILL)
    while (msg := await stream.read()) is not grpc.aio.EOF:  # the session ends it
        seen(msg)
        if msg.WhichOneof("kind") == "action_request":
            await stream.answer(msg.action_request.request_id,
                                first(msg.action_request, 0))
    assert len(ended) == 3
    assert all(e.result.termination in (g.TERMINATION_NORMAL, g.TERMINATION_CHINCHON)
               for e in ended), ended
    assert all(e.HasField("record") for e in ended)


def test_a_bot_refused_again_and_again_is_logged_sparingly() -> None:
    from chinchon_referee.referee.quota import Quota

    q = Quota("things", 1, 10, "per", "all")
    logged = [n for n in (q.worth_logging("a") for _ in range(2000)) if n is not None]
    assert logged == [1, 10, 100, 1000]
    assert q.worth_logging("b") == 1


@pytest.mark.parametrize("server", [[]], indirect=True)
async def test_a_tournament_games_strong_house_bots_decide_off_the_loop_as_they_would_inline(
    server: RunningServer,
) -> None:
    """A game that is not practice with two strong house seats: their decisions come
    from the other worker process (not the practice one), and are exactly those the
    bots make inline for the same seeds (seat i's bot is seeded i)."""
    from chinchon.engine import (
        GameState,
        action_from_json,
        legal_actions,
        new_game,
        observation,
        replay,
    )
    from chinchon_referee.referee.house import make_house_bot

    out = await server.referee.play(spec("strong-pair", ["house:strong", "house:strong"]))
    assert server.referee.worker(practice=False).pid is not None
    assert server.referee.worker(practice=True).pid is None
    record = out.record
    names = [s["name"] for s in record["seats"]]
    states: list[GameState] = []
    replay(record, on_step=lambda st, _i: states.append(st))
    bots = [make_house_bot("strong", 0), make_house_bot("strong", 1)]
    checked = 0
    for i, step in enumerate(record["actions"]):
        move = step.get("move")
        if move is None:
            continue
        before = states[i - 1] if i else new_game(states[0].rules)
        seat = move.get("seat", 0)
        want = bots[seat].choose(observation(before, seat, names), legal_actions(before))
        assert action_from_json(move["action"]) == want, f"step {i}"
        checked += 1
    assert checked > 20
