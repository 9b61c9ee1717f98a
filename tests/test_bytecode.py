"""The run's byte-compilation of the project (tests/support/bytecode.py), on a tree of
its own: every module gets its ``.pyc`` whatever PYTHONDONTWRITEBYTECODE says, a stale
one is rewritten, Node's packages and build trees are left alone, and a process then
imports the module from its ``.pyc`` (no compile)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from tests.support.bytecode import compile_project


def _tree(root: Path) -> dict[str, Path]:
    files = {
        "module": root / "server" / "pkg" / "mod.py",
        "test": root / "tests" / "helper.py",
        "node": root / "sample_bots" / "node" / "node_modules" / "x" / "gen.py",
        "build": root / "client_sdk" / "build" / "lib" / "copy.py",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("VALUE = 1\n")
    return files


def _pyc(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_every_module_is_compiled_once_and_a_stale_one_again(tmp_path: Path) -> None:
    files = _tree(tmp_path)
    assert compile_project(tmp_path)
    assert _pyc(files["module"]).is_file() and _pyc(files["test"]).is_file()
    assert not _pyc(files["node"]).exists() and not _pyc(files["build"]).exists()
    first = _pyc(files["module"]).read_bytes()
    files["module"].write_text("VALUE = 2  # changed\n")
    os.utime(files["module"], (1, 2_000_000_000))  # newer than the .pyc, whatever the clock
    assert compile_project(tmp_path)
    assert _pyc(files["module"]).read_bytes() != first


def test_a_process_that_may_not_write_bytecode_still_reads_it(tmp_path: Path) -> None:
    """With PYTHONDONTWRITEBYTECODE set, the import finds the run's .pyc: the source is
    not compiled (``compile`` of the import machinery is never called)."""
    files = _tree(tmp_path)
    assert compile_project(tmp_path)
    probe = (
        "import importlib.machinery as m, sys\n"
        "compiled = []\n"
        "real = m.SourceFileLoader.source_to_code\n"
        "def spy(self, data, path, *a, **k):\n"
        "    compiled.append(path)\n"
        "    return real(self, data, path, *a, **k)\n"
        "m.SourceFileLoader.source_to_code = spy\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import pkg.mod\n"
        "print(pkg.mod.VALUE, [p for p in compiled if p.endswith('mod.py')])\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", probe, str(files["module"].parents[1])],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1 []", out
