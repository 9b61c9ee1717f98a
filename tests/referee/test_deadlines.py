"""The single deadline timer (:class:`Deadlines`): futures expire in deadline order at
about their time, never once completed, with one timer re-armed as deadlines come and
go, and a heap kept small by compaction.

The units run on the test's real event loop with short times and generous bounds.
"""

from __future__ import annotations

import asyncio

import pytest
from chinchon_referee.referee import Deadlines

#: A negative check's window: past every deadline, nothing more may happen meanwhile.
QUIET = 0.05


async def test_deadlines_expire_futures_in_deadline_order_at_about_their_time() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    assert Deadlines.of(loop) is d
    t0 = loop.time()
    offsets = [0.25, 0.05, 0.15, 0.1, 0.1]  # two equal deadlines: the seq breaks ties
    fired: list[tuple[float, float]] = []
    futs = []
    for off in offsets:
        f = loop.create_future()
        f.add_done_callback(lambda _f, off=off: fired.append((off, loop.time() - t0)))
        d.add(t0 + off, f)
        futs.append(f)
    _done, pending = await asyncio.wait(futs, timeout=5)
    assert not pending
    for f in futs:
        assert isinstance(f.exception(), TimeoutError)
    assert [off for off, _ in fired] == sorted(offsets)
    for off, at in fired:
        assert off - 0.005 <= at < off + 1.5, (off, at)
    assert d.heap == [] and d.timer is None and d.armed == float("inf")


async def test_deadlines_never_fail_a_future_completed_in_time() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    answered = loop.create_future()
    answered_late_but_in_time = loop.create_future()
    cancelled = loop.create_future()
    unanswered = loop.create_future()
    d.add(t0 + 0.05, answered)
    d.add(t0 + 0.15, answered_late_but_in_time)
    d.add(t0 + 0.1, cancelled)
    d.add(t0 + 0.2, unanswered)
    answered.set_result("a")
    loop.call_later(0.03, answered_late_but_in_time.set_result, "b")
    cancelled.cancel()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(unanswered, 5)
    # A negative check: for QUIET more, past every deadline, nothing fails the others.
    await asyncio.sleep(QUIET)
    assert answered.result() == "a"
    assert answered_late_but_in_time.result() == "b"
    assert cancelled.cancelled()
    assert d.heap == []


async def test_deadlines_rearm_for_an_earlier_deadline_added_later() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    far = loop.create_future()
    d.add(t0 + 30, far)
    assert d.armed == t0 + 30
    near = loop.create_future()
    d.add(t0 + 0.05, near)
    assert d.armed == t0 + 0.05
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(near, 5)
    assert loop.time() - t0 < 5  # the far deadline's timer was not the one used
    assert not far.done()
    assert d.armed == t0 + 30 and len(d.heap) == 1  # re-armed for what is left
    # A later deadline than the armed one does not move the timer.
    later = loop.create_future()
    d.add(t0 + 60, later)
    assert d.armed == t0 + 30
    far.set_result(None)
    later.set_result(None)
    assert d.timer is not None
    d.timer.cancel()


async def test_deadlines_compaction_keeps_the_heap_small() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    biggest = 0
    live = []
    answered = []
    for i in range(5000):
        f = loop.create_future()
        if i % 500 == 0:
            d.add(t0 + 0.2, f)  # a few stay outstanding: compaction must keep them
            live.append(f)
        else:
            d.add(t0 + 60 + i * 1e-3, f)
            f.set_result(i)  # answered at once, as almost every request is
            answered.append(f)
        biggest = max(biggest, len(d.heap))
    assert biggest <= 1024
    assert len(d.heap) < 1024
    assert sum(1 for _, _, f in d.heap if not f.done()) == len(live) == 10
    # The outstanding ones still expire; the answered ones keep their results.
    _done, pending = await asyncio.wait(live, timeout=5)
    assert not pending and all(isinstance(f.exception(), TimeoutError) for f in live)
    assert all(not f.cancelled() and f.exception() is None for f in answered)
    if d.timer is not None:
        d.timer.cancel()
