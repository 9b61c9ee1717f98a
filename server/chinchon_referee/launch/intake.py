"""The bounded copy of an untrusted tree: a submission as it arrives (a folder, or a
``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.xz`` or ``.zip`` archive), and a build's result
as it leaves its sandbox (a tar stream).

What is taken, into a new folder of the organizer's (mode 0700):

- regular files, written by reading their data (never a file's own copy or
  ``copy_file_range``): runs of zeros are skipped, not written, so a hole stays a hole
  and nothing is inflated; each file's mode keeps its owner/group/other read and
  execute bits and its owner's write bit, never setuid, setgid or sticky;
- folders (mode 0755 at most, never sticky or setgid);
- symbolic links whose target, resolved inside the tree (through its other links),
  never leaves it: absolute targets and any ``..`` above the top are refused.
  Links are made last and never followed while copying;
- in an archive, a hard link to an earlier member: copied as a file of its own.

Refused, naming the entry: device files, FIFOs, sockets; a folder's file with more
than one hard link (it may be the organizer's own file, linked in); names that are
absolute, hold ``..``, a NUL, or appear twice; and more than :class:`Bounds` allow —
the apparent size of all files together (a file is refused before a byte of it is
read when its declared size would pass it) and the number of entries. An archive's
headers are read through a bounded reader too, so a forged size or a compressed bomb
stops at the bound. Whatever was written is removed when the copy is refused.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, cast

MIB = 1024 * 1024
_CHUNK = MIB
#: Zeros are skipped by blocks of this size (a file system's page).
_BLOCK = 4096
#: How far symbolic links are followed when checking where one ends.
_HOPS = 40
#: What an archive may hold beside its files' data: headers (and their long names),
#: per entry, and once.
_HEADER_ROOM = 4 * 512
_EXTRA_ROOM = 4 * MIB
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".zip")


class IntakeError(ValueError):
    """A tree that is not taken: the message names the entry and the reason."""


#: The organizer's bounds on its bounds (inclusive): ``submission_mb`` and
#: ``submission_files``, as flags or declaration keys.
SIZE_MB = (1, 64 * 1024)
FILES = (1, 1_000_000)


@dataclass(frozen=True)
class Bounds:
    """How much an untrusted tree may hold (the organizer's)."""

    #: Apparent size of all its files together, holes included.
    size_mb: int = 256
    #: Its entries: files, folders and links.
    files: int = 20_000

    def __post_init__(self) -> None:
        if not SIZE_MB[0] <= self.size_mb <= SIZE_MB[1]:
            raise IntakeError(f"size_mb: between {SIZE_MB[0]} and {SIZE_MB[1]}, got "
                              f"{self.size_mb!r}")
        if not FILES[0] <= self.files <= FILES[1]:
            raise IntakeError(f"files: between {FILES[0]} and {FILES[1]}, got {self.files!r}")

    @property
    def size(self) -> int:
        return self.size_mb * MIB


@dataclass(frozen=True)
class Taken:
    """What a copy took: entries and the apparent bytes of its files."""

    entries: int
    size: int


def _clip(name: object) -> str:
    text = str(name)
    return repr(text if len(text) <= 80 else text[:77] + "...")


class _Tree:
    """The folder being written: bounds counted, names checked, links kept for last."""

    def __init__(self, dest: Path, bounds: Bounds) -> None:
        self.dest = dest
        self.bounds = bounds
        self.entries = 0
        self.size = 0
        self.dirs: set[PurePosixPath] = {PurePosixPath()}
        self.files: set[PurePosixPath] = set()
        self.links: dict[PurePosixPath, str] = {}

    def name(self, raw: str) -> PurePosixPath | None:
        """``raw`` as a path inside the tree (None: the top itself), or IntakeError."""
        if "\0" in raw or raw.startswith("/") or "\\" in raw:
            raise IntakeError(f"{_clip(raw)}: not a relative name")
        parts = [p for p in raw.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise IntakeError(f"{_clip(raw)}: a name with '..'")
        return PurePosixPath(*parts) if parts else None

    def _count(self, rel: PurePosixPath) -> None:
        if rel in self.dirs or rel in self.files or rel in self.links:
            raise IntakeError(f"{_clip(rel)}: appears twice")
        self.entries += 1
        if self.entries > self.bounds.files:
            raise IntakeError(f"more than {self.bounds.files} entries (the bound on files)")

    def folder(self, rel: PurePosixPath, mode: int) -> None:
        if rel in self.dirs:
            return
        self._parent(rel)
        self._count(rel)
        os.mkdir(self.dest / rel, 0o700)
        os.chmod(self.dest / rel, (mode & 0o755) | 0o700)
        self.dirs.add(rel)

    def _parent(self, rel: PurePosixPath) -> None:
        if rel.parent not in self.dirs:
            self.folder(rel.parent, 0o755)

    def file(self, rel: PurePosixPath, size: int, mode: int,
             read: Callable[[int], bytes]) -> None:
        """A file of ``size`` bytes, its data from ``read`` (refused before any of it is
        read when ``size`` passes the bound)."""
        self._parent(rel)
        self._count(rel)
        if size < 0 or self.size + size > self.bounds.size:
            raise IntakeError(f"{_clip(rel)}: {size / MIB:.1f} MiB would pass the bound "
                              f"on the apparent size ({self.bounds.size_mb} MiB in all)")
        self.size += size
        fd = os.open(self.dest / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     0o600)
        try:
            _write(fd, rel, size, read)
            os.fchmod(fd, (mode & 0o755) | 0o600)
        finally:
            os.close(fd)
        self.files.add(rel)

    def copy(self, rel: PurePosixPath, of: PurePosixPath, mode: int) -> None:
        """A file with the data of ``of``, written earlier (an archive's hard link)."""
        if of not in self.files:
            raise IntakeError(f"{_clip(rel)}: a hard link to {_clip(of)}, not a file before it")
        with open(self.dest / of, "rb") as src:
            self.file(rel, os.fstat(src.fileno()).st_size, mode, src.read)

    def link(self, rel: PurePosixPath, target: str) -> None:
        self._parent(rel)
        self._count(rel)
        self.links[rel] = target

    def finish(self) -> Taken:
        """Make the links (each checked to end inside the tree)."""
        for rel, target in sorted(self.links.items()):
            if not _inside(rel, target, self.links):
                raise IntakeError(f"{_clip(rel)}: a link that leads out of the tree "
                                  f"(to {_clip(target)})")
        for rel, target in sorted(self.links.items()):
            os.symlink(target, self.dest / rel)
        return Taken(self.entries, self.size)


def _write(fd: int, rel: PurePosixPath, size: int, read: Callable[[int], bytes]) -> None:
    """``size`` bytes from ``read`` into ``fd``; blocks of zeros skipped (a hole), never
    written."""
    left = size
    while left:
        chunk = read(min(_CHUNK, left))
        if not chunk:
            raise IntakeError(f"{_clip(rel)}: ends before its {size} bytes")
        _put(fd, chunk)
        left -= len(chunk)
    os.ftruncate(fd, size)


def _put(fd: int, chunk: bytes) -> None:
    """``chunk`` at the file's offset: its runs of zero blocks skipped, the rest written."""
    if chunk.count(0) == len(chunk):
        os.lseek(fd, len(chunk), os.SEEK_CUR)
        return
    view = memoryview(chunk)
    start, zeros = 0, False
    for at in range(0, len(chunk) + _BLOCK, _BLOCK):
        here = at < len(chunk) and chunk.count(0, at, at + _BLOCK) == len(view[at:at + _BLOCK])
        if at >= len(chunk) or here != zeros:
            if at > start:
                if zeros:
                    os.lseek(fd, min(at, len(chunk)) - start, os.SEEK_CUR)
                else:
                    _write_all(fd, view[start:min(at, len(chunk))])
            start, zeros = at, here


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data):]


def _inside(rel: PurePosixPath, target: str, links: dict[PurePosixPath, str]) -> bool:
    """Whether link ``rel`` -> ``target``, resolved in the tree as the kernel would
    (through its other links), stays inside it."""
    parts = list(rel.parent.parts)
    todo = target.split("/")
    if not target or target.startswith("/"):
        return False
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return False
            parts.pop()
            continue
        parts.append(part)
        inner = links.get(PurePosixPath(*parts))
        if inner is not None:
            hops += 1
            if hops > _HOPS or not inner or inner.startswith("/"):
                return False
            parts.pop()
            todo = inner.split("/") + todo
    return True


def take(source: Path, dest: Path, bounds: Bounds) -> Taken:
    """Copy ``source`` (a folder or an archive, by its name) into ``dest`` (new, made
    0700); IntakeError naming what is refused, and nothing left at ``dest``."""
    if source.is_dir():
        return _taking(dest, bounds, lambda tree: _from_folder(source, tree))
    name = source.name.lower()
    if not source.is_file() or not name.endswith(ARCHIVES):
        raise IntakeError(f"neither a folder nor an archive ({', '.join(ARCHIVES)})")
    if name.endswith(".zip"):
        return _taking(dest, bounds, lambda tree: _from_zip(source, tree))
    with open(source, "rb") as raw:
        return take_tar(raw, dest, bounds)


def take_tar(raw: IO[bytes], dest: Path, bounds: Bounds) -> Taken:
    """Copy a tar stream (plain or compressed: gzip, xz, bzip2, told by its first bytes)
    read from ``raw`` into ``dest`` (new, made 0700)."""
    return _taking(dest, bounds, lambda tree: _from_tar(raw, tree))


def _taking(dest: Path, bounds: Bounds, fill: Callable[[_Tree], None]) -> Taken:
    os.mkdir(dest, 0o700)
    os.chmod(dest, 0o700)
    tree = _Tree(dest, bounds)
    try:
        fill(tree)
        return tree.finish()
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _from_folder(source: Path, tree: _Tree) -> None:
    top = os.open(source, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _walk(top, PurePosixPath(), tree)
    finally:
        os.close(top)


def _walk(dir_fd: int, at: PurePosixPath, tree: _Tree) -> None:
    """The folder open at ``dir_fd`` (``at`` in the tree), each entry opened relative to
    it and never through a link, so a name swapped for a link meanwhile is not followed."""
    with os.scandir(dir_fd) as it:
        names = sorted(e.name for e in it)
    for name in names:
        rel = at / name
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            tree.link(rel, os.readlink(name, dir_fd=dir_fd))
        elif stat.S_ISDIR(st.st_mode):
            tree.folder(rel, st.st_mode)
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                _walk(fd, rel, tree)
            finally:
                os.close(fd)
        elif stat.S_ISREG(st.st_mode):
            _folder_file(dir_fd, name, rel, tree)
        else:
            raise IntakeError(f"{_clip(rel)}: {_kind(st.st_mode)}: not taken")


def _folder_file(dir_fd: int, name: str, rel: PurePosixPath, tree: _Tree) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IntakeError(f"{_clip(rel)}: {_kind(st.st_mode)}: not taken")
        if st.st_nlink > 1:
            raise IntakeError(f"{_clip(rel)}: a file with {st.st_nlink} hard links: not taken "
                              "(copy it as a file of its own)")
        tree.file(rel, st.st_size, st.st_mode, lambda n: os.read(fd, n))
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "a special file"


class _Bounded:
    """A stream that refuses to be read past ``limit`` bytes in all."""

    def __init__(self, inner: IO[bytes], limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.done = 0

    def read(self, n: int = -1) -> bytes:
        if n < 0 or self.done + n > self.limit:
            n = self.limit - self.done + 1
        data = self.inner.read(n)
        self.done += len(data)
        if self.done > self.limit:
            raise IntakeError(f"the archive passes {self.limit // MIB} MiB of headers and data "
                              "(the bound on the apparent size)")
        return data


def _decompressed(raw: IO[bytes]) -> IO[bytes]:
    head = raw.read(6)
    joined = cast(IO[bytes], _Joined(head, raw))
    if head.startswith(b"\x1f\x8b"):
        return cast(IO[bytes], gzip.GzipFile(fileobj=joined, mode="rb"))
    if head.startswith(b"\xfd7zXZ\x00"):
        return cast(IO[bytes], lzma.LZMAFile(joined))
    if head.startswith(b"BZh"):
        return cast(IO[bytes], bz2.BZ2File(joined))
    return joined


class _Joined:
    """``head`` (already read) then the rest of ``raw``."""

    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        self.head = head
        self.raw = raw

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = (self.head, b"") if n < 0 or n >= len(self.head) else \
                (self.head[:n], self.head[n:])
            return out
        return self.raw.read(n)


def _from_tar(raw: IO[bytes], tree: _Tree) -> None:
    b = tree.bounds
    limit = b.size + b.files * _HEADER_ROOM + _EXTRA_ROOM
    stream = _Bounded(_decompressed(raw), limit)
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                _member(tar, member, tree)
    except OSError as e:
        if e.errno is not None:  # the organizer's disk, not the archive
            raise
        raise IntakeError(f"not a readable tar archive: {e}") from None
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as e:
        raise IntakeError(f"not a readable tar archive: {e}") from None


def _member(tar: tarfile.TarFile, m: tarfile.TarInfo, tree: _Tree) -> None:
    rel = tree.name(m.name)
    if rel is None:
        return
    if m.isdir():
        tree.folder(rel, m.mode)
    elif m.issym():
        tree.link(rel, m.linkname)
    elif m.islnk():
        of = tree.name(m.linkname)
        tree.copy(rel, of or PurePosixPath(), m.mode)
    elif m.isreg():
        data = tar.extractfile(m)
        assert data is not None
        tree.file(rel, m.size, m.mode, data.read)
    else:
        kind = "a FIFO" if m.isfifo() else "a device file" if m.isdev() else "a special entry"
        raise IntakeError(f"{_clip(rel)}: {kind}: not taken")


def _from_zip(source: Path, tree: _Tree) -> None:
    try:
        with zipfile.ZipFile(source) as z:
            for info in z.infolist():
                _zip_entry(z, info, tree)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error,
            NotImplementedError, RuntimeError) as e:
        raise IntakeError(f"{source.name}: not a readable zip archive: {e}") from None


def _zip_entry(z: zipfile.ZipFile, info: zipfile.ZipInfo, tree: _Tree) -> None:
    rel = tree.name(info.filename)
    if rel is None:
        return
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.is_dir():
        tree.folder(rel, mode or 0o755)
    elif kind == stat.S_IFLNK:
        if info.file_size > 4096:
            raise IntakeError(f"{_clip(rel)}: a link's target of {info.file_size} bytes")
        tree.link(rel, z.read(info).decode("utf-8", errors="replace"))
    elif kind in (0, stat.S_IFREG):
        with z.open(info) as data:
            tree.file(rel, info.file_size, mode or 0o644, data.read)
            if data.read(1):
                raise IntakeError(f"{_clip(rel)}: longer than the size its header gives")
    else:
        raise IntakeError(f"{_clip(rel)}: {_kind(mode)}: not taken")


def remove(folder: Path) -> None:
    """Remove a tree this module wrote (its links are not followed)."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder)
