"""Game record files: a record document as JSON (``.json``) or deflated JSON
(``.json.gz``, gzip), as `chinchon replay` and the exports read and write them. The
engine reads and writes documents; the files are here, outside it (the engine does no
I/O)."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from chinchon.engine import RecordError


def load_record(path: str | Path) -> dict[str, Any]:
    """The record document in the file ``path`` (plain or gzipped JSON, told apart by
    its first bytes); RecordError saying what is wrong."""
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
    """Write ``record`` to ``path``: gzipped JSON if the name ends in ``.gz``."""
    text = json.dumps(record, indent=1, ensure_ascii=False).encode()
    Path(path).write_bytes(gzip.compress(text, mtime=0) if str(path).endswith(".gz") else text)


def write_game_record(rec_dir: Path, record: dict[str, Any]) -> Path:
    """Write one game record as ``rec_dir/<gameId>.json``; its path. ValueError for a game
    id that is not fit for a file name."""
    game_id = str(record["gameId"])
    if not game_id or "/" in game_id or game_id.startswith("."):
        raise ValueError(f"not a game id fit for a file name: {game_id!r}")
    path = rec_dir / f"{game_id}.json"
    write_record(path, record)
    return path
