"""Game record files: a record document as JSON (``.json``, indented, to be read) or
deflated JSON (``.json.gz``: gzip of the minified JSON, about 10x smaller), as `chinchon
replay` and the exports read and write them; and a tournament's records written from its
database a page at a time. The engine reads and writes documents; the files are here,
outside it (the engine does no I/O)."""

from __future__ import annotations

import enum
import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..storage import Store


class RecordFormat(enum.StrEnum):
    """How a record file is written; the value is the file name's ending."""

    #: JSON, indented: for people to read.
    JSON = "json"
    #: gzip of the minified JSON: compact (the default of every export).
    JSON_GZ = "json.gz"

    def name_of(self, game_id: str) -> str:
        return f"{game_id}.{self.value}"


#: The formats' names, as command-line choices.
FORMATS = [f.value for f in RecordFormat]
#: Records read from the store at once when they are written to files (a page in memory).
RECORD_PAGE = 200


def load_record(path: str | Path) -> dict[str, Any]:
    """The record document in the file ``path`` (plain or gzipped JSON, told apart by
    its first bytes); RecordError saying what is wrong."""
    from chinchon.engine import RecordError  # here: writing records needs no engine

    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise RecordError(f"{path} is not a readable gzip file: {e}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RecordError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: a record is a JSON object")
    return data


def write_record(path: str | Path, record: dict[str, Any]) -> None:
    """Write ``record`` to ``path``: if the name ends in ``.gz``, its minified JSON
    gzipped (level 6: nearly the smallest, several times faster than 9), else indented
    JSON."""
    if str(path).endswith(".gz"):
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        Path(path).write_bytes(gzip.compress(text, compresslevel=6, mtime=0))
    else:
        Path(path).write_bytes(json.dumps(record, indent=1, ensure_ascii=False).encode())


def write_game_record(rec_dir: Path, record: dict[str, Any],
                      fmt: RecordFormat = RecordFormat.JSON) -> Path:
    """Write one game record as ``rec_dir/<gameId>.json`` (or ``.json.gz``); its path.
    A file of the same game in the other format is removed (one file per game).
    ValueError for a game id that is not fit for a file name."""
    game_id = str(record["gameId"])
    if not game_id or "/" in game_id or game_id.startswith("."):
        raise ValueError(f"not a game id fit for a file name: {game_id!r}")
    path = rec_dir / fmt.name_of(game_id)
    write_record(path, record)
    for other in RecordFormat:
        if other is not fmt:
            (rec_dir / other.name_of(game_id)).unlink(missing_ok=True)
    return path


def remove_game_records(rec_dir: Path, game_ids: Iterable[str]) -> None:
    """Remove the files of these games from ``rec_dir``, in every format."""
    for game_id in game_ids:
        for fmt in RecordFormat:
            (rec_dir / fmt.name_of(game_id)).unlink(missing_ok=True)


def stored_records(store: Store, tid: str, page: int = RECORD_PAGE) -> Iterator[dict[str, Any]]:
    """The finished games' records of ``tid`` in ``store``, in schedule order, read a page
    at a time (one page in memory, however many games)."""
    after = -1
    while rows := store.record_texts(tid, after, page):
        for _, _, text in rows:
            yield json.loads(text)
        after = rows[-1][1]


def export_records(store: Store, tid: str, rec_dir: Path, fmt: RecordFormat) -> int:
    """Write every finished game of ``tid`` as a file in ``rec_dir`` (created if need
    be), a page of records at a time; how many were written. OSError if the folder
    cannot be written."""
    rec_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    for record in stored_records(store, tid):
        write_game_record(rec_dir, record, fmt)
        n += 1
    return n
