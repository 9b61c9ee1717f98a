"""``chinchon bots check --declaration``: a submission checked under a tournament
declaration's ``[sandbox]`` table (its build's time and area, real builds in the
sandbox), a flag beside it only tightening it, a bad key refused by its path, and
``tournament check`` telling the bounds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from chinchon_referee.launch.confine import Confinement

from tests.support.submissions import check as _check
from tests.support.submissions import said as _said
from tests.support.submissions import submission as _submission
from tests.support.tournament import CLI


def _declaration(here: Path, sandbox: str) -> Path:
    path = here / "cup.toml"
    path.write_text(f'name = "cup"\n[sandbox]\n{sandbox}\n' + "".join(
        f'[[participants]]\nname = "{n}"\ncommand = ["{{python}}", "-m", "chinchon.sdk", '
        f'"--bot", "greedy"]\n' for n in ("a", "b")), encoding="utf-8")
    return path


@pytest.mark.parametrize(("declared", "flag"), [(3, []), (3, ["--build-timeout", "60"]),
                                                (600, ["--build-timeout", "3"])],
                         ids=["declared", "a-looser-flag-does-not-loosen", "a-tighter-flag-wins"])
def test_the_declarations_build_timeout_stops_a_build_as_the_flag_does(
        here: Path, confinement: Confinement, declared: int, flag: list[str]) -> None:
    _submission(here, "sleep 600", extra="build_timeout = 3600\n")
    cup = _declaration(here, f"build_timeout = {declared}")
    proc = _check(here, "--declaration", str(cup), *flag)
    assert proc.returncode == 1, _said(proc)
    assert "the build did not finish within 3 s (build_timeout)" in _said(proc), _said(proc)


def test_the_declarations_build_disk_mb_bounds_the_build_area(
        here: Path, confinement: Confinement) -> None:
    _submission(here, "i=0; while [ $i -lt 40 ]; do head -c 8388608 /dev/zero > f$i || exit 1; "
                "i=$((i+1)); done")
    cup = _declaration(here, "build_disk_mb = 32")
    proc = _check(here, "--declaration", str(cup), "--build-disk-mb", "1024")
    assert proc.returncode == 1, _said(proc)
    assert "FAIL: the build area is full (build_disk_mb = 32 MiB" in _said(proc), _said(proc)
    assert not (here / "out" / "bot").exists()


def test_a_bad_bound_in_the_declaration_is_refused_by_its_path(
        here: Path, confinement: Confinement) -> None:
    _submission(here, "true")
    cup = _declaration(here, "build_timeout = 7200")
    proc = _check(here, "--declaration", str(cup))
    assert proc.returncode == 2, _said(proc)
    assert "sandbox.build_timeout: 1 to 3600 seconds, got 7200" in _said(proc), _said(proc)
    assert not (here / "out").exists()  # refused before anything is taken


def test_tournament_check_tells_the_build_bounds(here: Path) -> None:
    cup = _declaration(here, "build_timeout = 30\nsubmission_files = 500")
    proc = subprocess.run([*CLI, "tournament", "check", str(cup)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, _said(proc)
    assert ("build_timeout 30 s, build_disk_mb 256, submission_mb 256, submission_files 500"
            in _said(proc)), _said(proc)
    bad = _declaration(here, "submission_mb = true")
    proc = subprocess.run([*CLI, "tournament", "check", str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "sandbox.submission_mb: must be a whole number, got True" in _said(proc), _said(proc)
