"""The bounded copy of an untrusted tree (launch/intake.py), from a folder, a tar stream
and a zip archive, each holding what a hostile submitter would put there: a sparse file
of 4 GiB, links to the organizer's files (direct, and through a chain of inner links),
FIFOs, devices, hard links, setuid/setgid/sticky modes, names with '..', and more
entries than allowed."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from chinchon_referee.launch.intake import Bounds, IntakeError, _inside, take, take_tar
from hypothesis import given, settings
from hypothesis import strategies as st

GIB = 1024 ** 3


@pytest.fixture
def here() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="chin-") as d:
        yield Path(d)


def _tree(root: Path) -> Path:
    sub = root / "sub"
    (sub / "deep").mkdir(parents=True)
    (sub / "bot.py").write_text("print('hi')")
    (sub / "deep" / "data.bin").write_bytes(b"\0" * 4096 + b"x")
    os.symlink("../bot.py", sub / "deep" / "up")
    os.symlink("deep/data.bin", sub / "down")
    return sub


def test_a_folder_is_copied_links_inside_kept_modes_stripped(here: Path) -> None:
    sub = _tree(here)
    (sub / "suid").write_text("#!/bin/sh\n")
    os.chmod(sub / "suid", 0o6777)
    (sub / "sticky").mkdir()
    os.chmod(sub / "sticky", 0o3777)
    got = take(sub, here / "copy", Bounds())
    copy = here / "copy"
    assert got.entries == 7
    assert stat.S_IMODE(copy.stat().st_mode) == 0o700
    assert (copy / "deep" / "up").read_text() == "print('hi')"
    assert os.readlink(copy / "down") == "deep/data.bin"
    assert stat.S_IMODE((copy / "suid").stat().st_mode) == 0o755
    assert stat.S_IMODE((copy / "sticky").stat().st_mode) == 0o755
    # the zeros were skipped: the copy's first block is a hole
    assert os.lseek(os.open(copy / "deep" / "data.bin", os.O_RDONLY), 0, os.SEEK_DATA) >= 4096


def test_a_sparse_file_of_4_gib_is_refused_before_a_byte_is_written(here: Path) -> None:
    sub = here / "sub"
    sub.mkdir()
    (sub / "bot.toml").write_text("x")
    with open(sub / "huge", "wb") as f:
        f.truncate(4 * GIB)  # 0 bytes on disk
    with pytest.raises(IntakeError, match=r"'huge': 4096.0 MiB would pass the bound"):
        take(sub, here / "copy", Bounds(size_mb=256))
    assert not (here / "copy").exists()


@pytest.mark.parametrize("target", ["/etc/passwd", "../../etc/passwd", "../..", "x/../../.."])
def test_a_link_that_leaves_the_tree_is_refused(here: Path, target: str) -> None:
    sub = _tree(here)
    os.symlink(target, sub / "deep" / "evil")
    with pytest.raises(IntakeError, match="'deep/evil': a link that leads out"):
        take(sub, here / "copy", Bounds())
    assert not (here / "copy").exists()


def test_a_link_that_leaves_through_another_inner_link_is_refused(here: Path) -> None:
    sub = _tree(here)
    os.symlink("..", sub / "deep" / "top")          # inside: sub itself
    os.symlink("top/..", sub / "deep" / "escape")   # 'deep/top/..': above sub
    with pytest.raises(IntakeError, match="'deep/escape': a link that leads out"):
        take(sub, here / "copy", Bounds())


@pytest.mark.parametrize(("kind", "says"), [("fifo", "'special': a FIFO"),
                                            ("socket", "'special': a socket"),
                                            ("hard link", "a file with 2 hard links")])
def test_special_files_and_hard_links_are_refused(here: Path, kind: str, says: str) -> None:
    sub = _tree(here)
    if kind == "fifo":
        os.mkfifo(sub / "special")
    elif kind == "socket":
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(sub / "special"))
        s.close()
    else:
        os.link(sub / "bot.py", sub / "special")
    with pytest.raises(IntakeError, match=says):
        take(sub, here / "copy", Bounds())
    assert not (here / "copy").exists()


def test_the_entry_bound_holds(here: Path) -> None:
    sub = here / "sub"
    sub.mkdir()
    for i in range(11):
        (sub / f"f{i}").write_text("x")
    with pytest.raises(IntakeError, match="more than 10 entries"):
        take(sub, here / "copy", Bounds(files=10))
    assert take(sub, here / "ok", Bounds(files=11)).entries == 11


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:  # type: ignore[call-overload]
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, mode: int = 0o644,
          link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode, info.linkname = kind, size, mode, link
    return info


def test_a_tar_stream_is_taken_with_its_hard_links_as_files_and_modes_stripped(here: Path) -> None:
    data = _tar([(_info("d", tarfile.DIRTYPE, mode=0o1777), None),
                 (_info("d/run", size=3, mode=0o4755), b"abc"),
                 (_info("d/again", tarfile.LNKTYPE, link="d/run", mode=0o2755), None),
                 (_info("d/l", tarfile.SYMTYPE, link="run"), None)], "w:gz")
    take_tar(io.BytesIO(data), here / "copy", Bounds())
    copy = here / "copy"
    assert (copy / "d" / "again").read_bytes() == b"abc"
    assert (copy / "d" / "again").stat().st_ino != (copy / "d" / "run").stat().st_ino
    assert {stat.S_IMODE((copy / "d" / n).stat().st_mode) for n in ("run", "again")} == {0o755}
    assert stat.S_IMODE((copy / "d").stat().st_mode) == 0o755
    assert os.readlink(copy / "d" / "l") == "run"


@pytest.mark.parametrize(("member", "says"), [
    (_info("../up", size=1), "a name with '..'"),
    (_info("/abs", size=1), "not a relative name"),
    (_info("dev", tarfile.CHRTYPE), "a device file"),
    (_info("pipe", tarfile.FIFOTYPE), "a FIFO"),
    (_info("out", tarfile.SYMTYPE, link="/etc/shadow"), "a link that leads out"),
    (_info("big", size=300 * 1024 * 1024), "would pass the bound"),
])
def test_a_hostile_tar_member_is_refused(here: Path, member: tarfile.TarInfo, says: str) -> None:
    data = member.tobuf(tarfile.PAX_FORMAT) + b"\0" * 1024  # a header alone: no data read
    with pytest.raises(IntakeError, match=says):
        take_tar(io.BytesIO(data), here / "copy", Bounds(size_mb=256))
    assert not (here / "copy").exists()


def test_a_zip_archive_is_taken_and_its_link_out_refused(here: Path) -> None:
    good = here / "good.zip"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("bot.toml", "name = 'z'")
        info = zipfile.ZipInfo("run.sh")
        info.external_attr = (stat.S_IFREG | 0o4755) << 16
        z.writestr(info, "#!/bin/sh\n")
    take(good, here / "copy", Bounds())
    assert stat.S_IMODE((here / "copy" / "run.sh").stat().st_mode) == 0o755
    bad = here / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        info = zipfile.ZipInfo("passwd")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    with pytest.raises(IntakeError, match="'passwd': a link that leads out"):
        take(bad, here / "copy2", Bounds())


_NAMES = st.sampled_from(["a", "b", "c", "a/b", "b/c", "c/a"])
_TARGETS = st.lists(st.sampled_from(["..", ".", "a", "b", "c"]), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_NAMES, _TARGETS, max_size=5))
def test_a_link_judged_inside_resolves_inside_in_the_kernel(links: dict[str, list[str]]) -> None:
    """Soundness of the link check: a link it lets in never resolves, by the kernel,
    out of the tree (through any chain of the tree's other links)."""
    from pathlib import PurePosixPath
    with tempfile.TemporaryDirectory(prefix="chin-") as d:
        top = Path(d) / "top"
        made: dict[PurePosixPath, str] = {}
        for name, parts in sorted(links.items()):
            path = top / name
            if any(PurePosixPath(name).parent == p or str(PurePosixPath(name)).startswith(f"{p}/")
                   for p in made):
                continue  # under a link: not a folder of the tree
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() or path.is_symlink():
                continue
            os.symlink("/".join(parts), path)
            made[PurePosixPath(name)] = "/".join(parts)
        for rel, target in made.items():
            if _inside(rel, target, made):
                real = os.path.realpath(top / rel)
                assert real == str(top.resolve()) or real.startswith(str(top.resolve()) + "/"), \
                    (rel, target, made, real)
