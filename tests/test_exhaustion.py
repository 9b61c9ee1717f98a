"""One bot must not be able to exhaust the server: what a hostile bot sends costs the
referee a bounded amount of memory, and its streams and practice sessions are limited.

Real servers on port 0; the hostile bot is a raw ``grpc.aio`` client in the test process
that writes PlayRequest bytes of its own making (padded with unknown fields, quoting 60 KB
of text where a card goes).
"""

from __future__ import annotations

import asyncio
import gc
import io
import tracemalloc
from collections.abc import Callable
from typing import Any

import grpc
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee import encode
from chinchon_referee.clip import MARK_SPACE, MAX_QUOTED, clip
from chinchon_referee.encode import delimited, varint
from chinchon_referee.logs import configure
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import start

PLAY = "/chinchon.v1.RefereeService/Play"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


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


# -- 3. the decoded-answer cache --------------------------------------------------------------


def test_answers_padded_with_unknown_fields_do_not_grow_the_server() -> None:
    """1,500 legal answers, each padded with a unique 40 KB unknown field (the referee
    must accept them: unknown fields are how protobuf stays compatible), leave neither
    the decoding cache nor the process's Python heap bigger by more than a few MiB
    (before: +60 MiB, never freed)."""

    def padded(req: pb.ActionRequest, n: int) -> bytes:
        pad = n.to_bytes(4, "big") * 10_000  # 40 KB, different for every answer
        return req.legal_actions[0].SerializeToString() + delimited(1000, pad)

    async def main() -> tuple[int, int]:
        server = await start(["hostile"])
        stream = RawStream(server.target, "tok-hostile")
        try:
            assert (await stream.hello(_practice())).WhichOneof("kind") == "welcome"
            await practise(stream, 20, padded)  # warm up: caches of short things filled
            gc.collect()
            cache0, heap0 = encode.remembered_bytes(), tracemalloc.get_traced_memory()[0]
            await practise(stream, 1500, padded)
            gc.collect()
            return (encode.remembered_bytes() - cache0,
                    tracemalloc.get_traced_memory()[0] - heap0)
        finally:
            await stream.close()
            await server.stop(0)

    tracemalloc.start()
    try:
        cache_growth, heap_growth = run(main())
    finally:
        tracemalloc.stop()
    assert cache_growth < 64 * 1024, cache_growth
    assert heap_growth < 8 * 1024 * 1024, f"the heap grew by {heap_growth / 2**20:.1f} MiB"


# -- 4. incidents and logs ----------------------------------------------------------------------


def test_a_bots_huge_text_is_clipped_in_incidents_logs_and_replies() -> None:
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

    async def main() -> list[dict[str, Any]]:
        server = await start(["hostile"])
        stream = RawStream(server.target, "tok-hostile")
        try:
            await stream.hello(_practice())
            await practise(stream, 60, huge, seen)
            return list(server.referee.incidents)
        finally:
            await stream.close()
            await server.stop(0)

    logs = io.StringIO()
    configure("info", "json", logs)
    try:
        incidents = run(main())
    finally:
        configure("info", "json")
    illegal = [i for i in incidents if i["kind"] == "illegal"]
    assert len(illegal) >= 50
    for i in illegal:
        assert i["code"] == "ERROR_CODE_MALFORMED"
        assert i["message"].startswith("'7777") and "characters left out" in i["message"]
        assert i["message"].endswith("or JK1/JK2 for a joker")  # the explanation is kept
        assert len(i["message"]) <= MAX_QUOTED + MARK_SPACE
    assert len(replies) >= 50 and all(len(m) <= MAX_QUOTED + MARK_SPACE for m in replies)
    lines = logs.getvalue().splitlines()
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
