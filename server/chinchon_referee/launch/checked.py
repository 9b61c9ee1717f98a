"""A checked bot's record: what ``chinchon bots check`` built, pinned by its content.

``bots check`` writes ``OUT/bot.check.json`` beside the built folder ``OUT/bot``: the
SHA-256 of every entry (its path, its kind and mode bits, its content or a link's
target) and whether the check passed. ``tournament run`` reads it for a participant's
``submission`` and refuses the folder when the check did not pass or when any entry
was added, removed or changed since (naming it): the bot that plays is the bot that
was checked, its manifest included.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CHUNK = 1024 * 1024
#: The record's format (a newer one is refused, not misread).
VERSION = 1


class RecordError(ValueError):
    """A built folder that does not match its record, or a record that cannot be used;
    the message names the entry."""


def record_of(folder: Path) -> Path:
    """Where ``folder``'s record is: beside it, ``NAME.check.json``."""
    return folder.with_name(folder.name + ".check.json")


def digests(folder: Path) -> dict[str, str]:
    """Each entry of ``folder`` (relative path, '/'-separated) and its digest: its kind,
    mode bits, and content (a file's bytes, a link's target). Links are not followed."""
    out: dict[str, str] = {}
    _walk(folder, "", out)
    return out


def _clip(name: str) -> str:
    return repr(name if len(name) <= 80 else name[:77] + "...")


def _walk(folder: Path, prefix: str, out: dict[str, str]) -> None:
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        rel = prefix + entry.name
        st = entry.stat(follow_symlinks=False)
        h = hashlib.sha256(f"{stat.S_IFMT(st.st_mode):o}:{stat.S_IMODE(st.st_mode):o}:".encode())
        if entry.is_symlink():
            h.update(os.readlink(entry.path).encode(errors="surrogateescape"))
        elif entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), rel + "/", out)
        elif entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
        out[rel] = h.hexdigest()


def total(entries: dict[str, str]) -> str:
    """One digest of them all."""
    h = hashlib.sha256()
    for name, digest in sorted(entries.items()):
        h.update(f"{name}\0{digest}\n".encode(errors="surrogateescape"))
    return h.hexdigest()


@dataclass(frozen=True)
class Record:
    passed: bool
    sha256: str
    entries: dict[str, str]

    def write(self, folder: Path) -> Path:
        path = record_of(folder)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"version": VERSION, "folder": folder.name,
                                   "passed": self.passed, "sha256": self.sha256,
                                   "entries": self.entries}, indent=1), encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return path

    @classmethod
    def of(cls, folder: Path, passed: bool) -> Record:
        entries = digests(folder)
        return cls(passed, total(entries), entries)

    @classmethod
    def read(cls, folder: Path) -> Record | None:
        """``folder``'s record, None when it has none (RecordError if unreadable)."""
        path = record_of(folder)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RecordError(f"{path}: cannot be read: {e}") from None
        if not isinstance(data, dict) or data.get("version") != VERSION or \
                not isinstance(data.get("entries"), dict) or \
                not isinstance(data.get("sha256"), str):
            raise RecordError(f"{path}: not a record of `chinchon bots check` (version {VERSION})")
        return cls(data.get("passed") is True, data["sha256"],
                   {str(k): str(v) for k, v in data["entries"].items()})

    def verify(self, folder: Path) -> None:
        """RecordError unless the check passed and ``folder`` is as it was then."""
        where = record_of(folder)
        if not self.passed:
            raise RecordError(f"{folder}: its check did not pass ({where})")
        try:
            now = digests(folder)
        except OSError as e:
            raise RecordError(f"{folder}: cannot be read: {e.strerror or e}") from None
        for name in sorted(set(now) | set(self.entries)):
            if name not in now:
                raise RecordError(f"{folder}: {_clip(name)} was removed since it was checked ({where})")
            if name not in self.entries:
                raise RecordError(f"{folder}: {_clip(name)} was added since it was checked ({where})")
            if now[name] != self.entries[name]:
                raise RecordError(f"{folder}: {_clip(name)} changed since it was checked ({where})")
        if total(now) != self.sha256:
            raise RecordError(f"{folder}: its record's digest does not match ({where})")
