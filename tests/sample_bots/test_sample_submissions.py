"""Each sample bot folder is a submission as it is: ``chinchon bots check
sample_bots/X`` copies it, builds it in the sandbox with no network where its manifest
says so (the C++ one, against the protos every sandbox reads at /run/chinchon/protos),
and plays it sandboxed: PASS, under the manifest's name, the folder unchanged.

The Node sample brings its ``node_modules`` (``npm ci --prefix sample_bots/node``, as
for every test of it); the C++ one needs the distribution's C++ gRPC toolchain
(tests/support/cpp.py: a failure under CI, a skip elsewhere)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.manifest import Manifest

from tests.support.cpp import toolchain_or_skip
from tests.support.helpers import ROOT
from tests.support.tournament import CLI

SAMPLES = ROOT / "sample_bots"


def _tracked(folder: Path) -> dict[str, bytes]:
    """The folder's files that git tracks, by path: what the check must leave alone."""
    names = subprocess.run(["git", "ls-files", "-z", "."], cwd=folder, capture_output=True,
                           check=True).stdout.decode().split("\0")
    return {n: (folder / n).read_bytes() for n in names if n}


@pytest.mark.parametrize("sample", ["python", "node", "cpp"])
def test_a_sample_folder_passes_bots_check_as_it_is(
        sample: str, tmp_path: Path, confinement: Confinement) -> None:
    folder = SAMPLES / sample
    if sample == "node":
        assert (folder / "node_modules").is_dir(), "run: npm ci --prefix sample_bots/node"
    if sample == "cpp":
        toolchain_or_skip()
    before = _tracked(folder)
    name = Manifest.read(folder).name
    proc = subprocess.run(
        [*CLI, "bots", "check", str(folder), "--out", str(tmp_path / "out"), "--games", "1",
         "--seed", "sample", "--build-timeout", "1200", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "PASS: every game played cleanly" in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["bot"] == name and report["clean"] and not report["incidents"]
    assert json.loads((tmp_path / "out" / "bot.check.json").read_text())["passed"]
    if sample == "cpp":  # built from the protos the sandbox gives, not the repository's
        cache = (tmp_path / "out" / "bot" / "build" / "CMakeCache.txt").read_text()
        assert "PROTO_ROOT:PATH=/run/chinchon/protos" in cache
    assert _tracked(folder) == before
