"""The fast raw bot: streams that answer every ActionRequest with its first legal action,
reading each message only as far as that and writing the answer as bytes (no SDK), so
that what a benchmark measures is the referee (bench_server.py, bench_shared.py,
bench_spectator.py, bench_tournament.py through ``bench_server.py bot``)."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from chinchon_referee.host.fdlimit import raise_nofile

from .procs import client_loop

PLAY_METHOD = "/chinchon.v1.RefereeService/Play"


def request_view() -> Any:
    """A message class that reads a PlayResponse only as far as a fast bot needs: the
    ActionRequest's id, its observation left as bytes, and its legal actions as bytes
    (unknown fields, such as the other kinds and ``accepted``, are skipped unread)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FileDescriptorProto(name="bench_view.proto", package="bench",
                                           syntax="proto3")
    req = f.message_type.add(name="RequestView")
    T = descriptor_pb2.FieldDescriptorProto
    req.field.add(name="request_id", number=1, type=T.TYPE_UINT64, label=T.LABEL_OPTIONAL)
    req.field.add(name="observation", number=3, type=T.TYPE_BYTES, label=T.LABEL_OPTIONAL)
    req.field.add(name="legal_actions", number=4, type=T.TYPE_BYTES, label=T.LABEL_REPEATED)
    resp = f.message_type.add(name="ResponseView")
    resp.field.add(name="action_request", number=3, type=T.TYPE_MESSAGE,
                   label=T.LABEL_OPTIONAL, type_name=".bench.RequestView")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("bench.ResponseView"))


def phase_of(observation: bytes) -> int:
    """Observation.phase (field 3) from the encoded observation: seat (1) and
    hand_number (2) come first, as protobuf encoders write fields in order."""
    from chinchon.wire import read_varint

    i, n = 0, len(observation)
    while i < n:
        key = observation[i]
        value, i = read_varint(observation, i + 1)
        if key == 0x18:
            return value
        if key not in (0x08, 0x10):
            return 0  # phase is unset only in PHASE_UNSPECIFIED
    return 0


def action_request_reader() -> Callable[[bytes], tuple[int, bytes] | None]:
    """A function that reads ``(request_id, first legal action)`` off the bytes of a
    ``PlayResponse`` that is an action request written the way the referee writes one
    (``action_request`` first; in it ``request_id`` before ``legal_actions``), with no
    message built, and returns None for anything else (the caller then parses it
    properly). It is what lets a benchmark bot cost about what the echo client costs
    per message."""
    from chinchon.wire import read_varint

    def fields(data: bytes) -> tuple[int, bytes] | None:
        if not data or data[0] != 0x1A:  # PlayResponse.action_request = 3, delimited
            return None
        n = data[1]
        i = 2
        if n >= 128:
            n, i = read_varint(data, 1)
        end = i + n
        rid = 0
        while i < end:
            key = data[i]
            if key == 0x08:  # request_id = 1
                b = data[i + 1]
                if b < 128:
                    rid, i = b, i + 2
                else:
                    rid, i = read_varint(data, i + 1)
            elif key & 7 == 2:  # game_id (2), observation (3), legal_actions (4)...
                n = data[i + 1]
                j = i + 2
                if n >= 128:
                    n, j = read_varint(data, i + 1)
                if key == 0x22:  # legal_actions = 4: the first one
                    return rid, data[j:j + n]
                i = j + n
            else:
                return None
        return None

    return fields


def action_reply_writer() -> Callable[[int, bytes], bytes]:
    """A function that encodes ``PlayRequest{action: ActionReply{request_id, action}}``
    from a request id and the bytes of an encoded Action (the first legal one)."""
    from chinchon.wire import delimited, varint
    from chinchon.wire.varint import SMALL, SMALL_LIMIT

    def reply(request_id: int, action: bytes) -> bytes:
        rid = SMALL[request_id] if request_id < SMALL_LIMIT else varint(request_id)
        return delimited(2, b"\x08" + rid + delimited(2, action))

    return reply


async def fast_bots(target: str, plan: Sequence[tuple[str, int]], per_channel: int = 50,
                    max_seconds: float = 600.0,
                    stop_when: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Open ``count`` Play streams per ``(token, count)`` in ``plan`` and answer every
    ActionRequest with its first legal action, until the referee closes the streams,
    ``stop_when()`` turns true (checked every 0.1 s; the streams are then cancelled) or
    ``max_seconds`` pass. Returns counters and (monotonic time, seconds) samples of the
    draw -> discard delay of one seat.

    The bots do as little as a bot can, so that what is measured is the referee: an
    action request is read straight off its bytes only as far as the request id and
    the first legal action (:func:`action_request_reader`; whose first byte also tells
    a draw from a discard), any other message with :func:`request_view`, and the
    answer is written as bytes."""
    import grpc
    from chinchon.v1 import referee_pb2 as pb

    hello = pb.PlayRequest(hello=pb.Hello(client="bench-fast-bot", queue=pb.QueueMode()))
    if os.environ.get("BENCH_LEAN") == "on":
        hello.hello.observations = pb.OBSERVATION_MODE_LEAN
    hello_bytes = hello.SerializeToString()
    parse = request_view().FromString
    fields = action_request_reader()
    reply = action_reply_writer()
    draw, discard = 0x0A, 0x1A  # the first byte of Action{draw_stock}, Action{discard}
    mono = time.monotonic
    samples: list[tuple[float, float]] = []
    counts: Counter[str] = Counter()
    total = sum(n for _, n in plan)
    channels = [grpc.aio.insecure_channel(target)
                for _ in range(max(1, -(-total // per_channel)))]

    calls: list[Any] = []

    async def one(ch: Any, token: str) -> None:
        call = ch.stream_stream(PLAY_METHOD)(metadata=(("authorization", f"Bearer {token}"),))
        calls.append(call)
        drew_at = 0.0
        try:
            await call.write(hello_bytes)
            while True:
                data = await call.read()
                if data is grpc.aio.EOF:
                    break
                got = fields(data)
                if got is None:
                    msg = parse(data)
                    if not msg.HasField("action_request"):
                        counts["other messages"] += 1
                        continue
                    req = msg.action_request
                    got = req.request_id, req.legal_actions[0]
                rid, first = got
                # The phase, from the first legal action: a draw (Action field 1 or 2)
                # in PHASE_DRAW, a discard (field 3) in PHASE_DISCARD.
                kind = first[0] if first else 0
                if drew_at and kind == discard:
                    now = mono()
                    samples.append((now, now - drew_at))
                drew_at = 0.0
                data = reply(rid, first)
                if kind == draw:
                    # Stamped before the write: its completion can be reported late.
                    drew_at = mono()
                await call.write(data)
                counts["requests"] += 1
        except grpc.aio.AioRpcError as e:
            counts[f"closed:{e.code().name}"] += 1
        except asyncio.CancelledError:
            counts["cancelled"] += 1
        else:
            counts["closed:OK"] += 1

    tasks = []
    i = 0
    for token, n in plan:
        for _ in range(n):
            tasks.append(asyncio.ensure_future(one(channels[i % len(channels)], token)))
            i += 1
    async def watch() -> None:
        if stop_when is None:
            return
        while not stop_when():
            await asyncio.sleep(0.1)
        for call in calls:
            call.cancel()

    watcher = asyncio.ensure_future(watch())
    _, pending = await asyncio.wait(tasks, timeout=max_seconds)
    watcher.cancel()
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=5)
    for ch in channels:
        await ch.close(grace=None)
    return {"counts": dict(counts), "samples": samples, "cpu": time.process_time(),
            "timed_out": len(pending)}


def bot_proc(pipe: Any, target: str, plan: list[tuple[str, int]], per_channel: int,
             max_seconds: float) -> None:
    raise_nofile()
    client_loop()
    pipe.send(asyncio.run(fast_bots(target, plan, per_channel, max_seconds, pipe.poll)))

