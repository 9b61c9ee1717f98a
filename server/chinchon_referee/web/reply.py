"""Sending an answer's bytes: in pieces, each waited for at most a while, from inside
the request's handler, so that an answer is counted among the requests in flight until
its client has it (guard.py), and a client that stops reading holds one piece at most."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

#: Bytes written at a time.
PIECE = 64 * 1024
#: Seconds a piece may wait for its client to read.
WRITE_TIMEOUT = 10.0


def json_bytes(data: Any, indent: int | None = None) -> bytes:
    if indent is None:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return json.dumps(data, indent=indent, ensure_ascii=False).encode()


async def send(request: web.Request, body: bytes, content_type: str = "application/json",
               headers: dict[str, str] | None = None,
               timeout: float = WRITE_TIMEOUT) -> web.StreamResponse:
    resp = web.StreamResponse(headers=headers)
    resp.content_type = content_type
    resp.charset = "utf-8"
    resp.content_length = len(body)
    try:
        await resp.prepare(request)
        view = memoryview(body)
        for i in range(0, len(body), PIECE):
            await asyncio.wait_for(resp.write(view[i:i + PIECE]), timeout)
        await resp.write_eof()
    except (ConnectionError, TimeoutError):  # the client went away, or stopped reading
        if request.transport is not None:
            request.transport.abort()
    return resp
