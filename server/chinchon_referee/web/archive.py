"""All the records of a tournament as one zip file, streamed.

The zip is written as it is sent: a batch of records is read (one short query), each
compressed into the archive in a worker thread, and the bytes written so far go out
before the next batch is read. Memory stays that of one batch whatever the number of
games, and the first bytes leave at once (zip's data descriptors need no seeking)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from aiohttp import web

from .reader import Reader


class _Sink(io.RawIOBase):
    """A write-only, unseekable file whose bytes are taken out as they come."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self._buf += b
        self._pos += len(b)
        return len(b)

    def tell(self) -> int:
        return self._pos

    def take(self) -> bytes:
        out = bytes(self._buf)
        self._buf.clear()
        return out


def _next(it: Iterator[list[tuple[str, str]]]) -> list[tuple[str, str]] | None:
    return next(it, None)


def _add(zf: zipfile.ZipFile, sink: _Sink, batch: list[tuple[str, str]]) -> bytes:
    for gid, text in batch:
        info = zipfile.ZipInfo(f"records/{gid}.json", date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, text)
    return sink.take()


def _close(zf: zipfile.ZipFile, sink: _Sink) -> bytes:
    zf.close()
    return sink.take()


async def stream_records(request: web.Request, reader: Reader, tid: str,
                         run: Callable[..., Awaitable[Any]]) -> web.StreamResponse:
    """Send the archive; ``run(fn, *args)`` runs ``fn`` in a worker thread."""
    resp = web.StreamResponse(headers={
        "Content-Type": "application/zip",
        "Content-Disposition": f'attachment; filename="{re.sub(r"[^A-Za-z0-9._-]", "_", tid)}-records.zip"'})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    sink = _Sink()
    zf = zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED)
    batches = reader.record_batches(tid)
    try:
        while (batch := await run(_next, batches)) is not None:
            await resp.write(await run(_add, zf, sink, batch))
        await resp.write(await run(_close, zf, sink))
        await resp.write_eof()
    except ConnectionResetError:
        pass
    return resp
