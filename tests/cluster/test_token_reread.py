"""A bot registered through another process connects here before this process's next
heartbeat (and without the bus's word, lost or late): its token is known at its first
call, because a token unknown here has the registered bots read again before it is
refused (``Cluster.reread_tokens``). Wrong tokens, however many and however fast, cost
the database at most one read per ``REREAD_EVERY``."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from chinchon_referee.auth import TokenBook, digest, new_token
from chinchon_referee.cluster.member import REREAD_EVERY, Cluster
from chinchon_referee.config import RefereeConfig
from chinchon_referee.referee import Referee
from chinchon_referee.storage import open_store

from tests.support.referee import stream_on_now
from tests.support.shared import Shared


async def test_a_token_registered_elsewhere_opens_a_stream_at_its_first_call(
        tmp_path: Path, pg_url: str) -> None:
    """Registered straight into the database, as another process does (no bus word
    follows: the bus is not the guarantee): the first call with the token is welcomed by
    both processes, and a wrong token is still refused."""
    shared = Shared(tmp_path, pg_url, 2)
    try:
        a, b = (f"127.0.0.1:{p}" for p in shared.ports)
        token = new_token()
        store = open_store(pg_url)
        try:
            assert store.add_bot("late", digest(token))
        finally:
            store.close()
        assert await stream_on_now(b, token)
        assert await stream_on_now(a, token)
        assert not await stream_on_now(b, new_token())
    finally:
        shared.close()


async def test_wrong_tokens_cost_one_read_per_interval_and_a_new_one_is_found(pg_url: str) -> None:
    """In this process, against a real database: a call with a wrong token every 5 ms
    for two seconds (hundreds, many at once) shares a handful of reads of the registered
    bots (one at a time, one per REREAD_EVERY at most), and each is refused; a token
    registered midway is known to the first call made after it, however recently the
    last read began."""
    store = open_store(pg_url)
    tokens = TokenBook()
    cluster = Cluster(store, Referee(RefereeConfig()), tokens, lease=60.0)
    reads = 0
    read = store.bots

    def counted() -> list[tuple[str, str]]:
        nonlocal reads
        reads += 1
        return read()

    store.bots = counted  # type: ignore[method-assign]  # counts the reads, reads for real
    try:
        loop = asyncio.get_running_loop()
        began = loop.time()
        wrong: list[asyncio.Future[str | None]] = []
        token, found = new_token(), None
        while loop.time() - began < 2.0:
            wrong.append(asyncio.ensure_future(tokens.bot_for_now(new_token())))
            if found is None and loop.time() - began > 1.0:
                assert store.add_bot("new", digest(token))
                found = asyncio.ensure_future(tokens.bot_for_now(token))
            await asyncio.sleep(0.005)
        assert found is not None and await found == "new"
        assert await asyncio.gather(*wrong) == [None] * len(wrong)
        elapsed = loop.time() - began
        assert len(wrong) >= 100
        assert 2 <= reads <= elapsed / REREAD_EVERY + 2, (reads, elapsed, len(wrong))
    finally:
        await cluster.stop()
        store.close()


async def test_a_read_begun_before_the_call_does_not_answer_it(pg_url: str) -> None:
    """A read of the registered bots that began before the token was registered (held
    here until released) must not answer a call made after: the call waits for a read
    begun after it, even when another call begins that read (51 calls wait together)."""
    store = open_store(pg_url)
    tokens = TokenBook()
    cluster = Cluster(store, Referee(RefereeConfig()), tokens, lease=60.0)
    read, first_read, release = store.bots, threading.Event(), threading.Event()

    def held() -> list[tuple[str, str]]:
        got = read()
        if not first_read.is_set():
            first_read.set()
            release.wait(60)  # the first read, done before the token was registered
        return got

    store.bots = held  # type: ignore[method-assign]  # holds the first read, reads for real
    try:
        waiting = [asyncio.ensure_future(tokens.bot_for_now(new_token()))]
        await asyncio.to_thread(first_read.wait, 60)
        token = new_token()
        assert store.add_bot("new", digest(token))
        found = asyncio.ensure_future(tokens.bot_for_now(token))
        waiting += [asyncio.ensure_future(tokens.bot_for_now(new_token())) for _ in range(50)]
        await asyncio.sleep(0)  # every call has begun waiting
        release.set()
        assert await found == "new"
        assert await asyncio.gather(*waiting) == [None] * 51
    finally:
        release.set()
        await cluster.stop()
        store.close()
