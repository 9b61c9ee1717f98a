"""Playthrough goldens (tests/engine/golden/playthrough_*.txt): every step's state, each seat's
observation, the legal actions and the action taken, for a few seeded games; played
again in memory and compared line by line, naming the first step that differs."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import Phase

GOLDEN = Path(__file__).resolve().parent / "golden"


def _load_maker() -> Any:
    spec = importlib.util.spec_from_file_location("make_playthroughs", GOLDEN / "make_playthroughs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_playthroughs", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


MAKER = _load_maker()
NAMES = [p.name for p in MAKER.PLAYTHROUGHS]


def first_difference(name: str, want: str, got: str) -> str | None:
    """``None`` when equal, else which step differs first, both lines, and how to
    regenerate."""
    if want == got:
        return None
    w, g = want.splitlines(), got.splitlines()
    i = next((k for k in range(min(len(w), len(g))) if w[k] != g[k]), min(len(w), len(g)))
    step = next((w[k] for k in range(min(i, len(w) - 1), -1, -1) if w[k].startswith("## ")), "header")
    return (
        f"playthrough_{name}.txt differs first at {step.lstrip('# ')} (line {i + 1}):\n"
        f"  file:   {w[i] if i < len(w) else '(end of file)'}\n"
        f"  engine: {g[i] if i < len(g) else '(end of output)'}\n"
        f"If the engine's new behaviour is intended, run {MAKER.REGENERATE} and explain "
        "the change in the commit message."
    )


def test_playthrough_files_are_those_of_make_playthroughs() -> None:
    assert sorted(p.name for p in GOLDEN.glob("playthrough_*.txt")) == sorted(
        MAKER.path_of(p).name for p in MAKER.PLAYTHROUGHS
    )


@pytest.mark.parametrize("name", NAMES)
def test_playthrough_played_again_is_identical(name: str) -> None:
    (pt,) = [p for p in MAKER.PLAYTHROUGHS if p.name == name]
    want = MAKER.path_of(pt).read_text(encoding="utf-8")
    problem = first_difference(name, want, MAKER.render(pt))
    assert problem is None, problem


def test_a_changed_step_is_named_with_the_command_to_regenerate() -> None:
    pt = MAKER.PLAYTHROUGHS[0]
    text = MAKER.render(pt)
    lines = text.splitlines()
    at = lines.index("## step 7") + 3
    changed = "\n".join(lines[:at] + [lines[at] + " (changed)"] + lines[at + 1 :]) + "\n"
    problem = first_difference(pt.name, text, changed)
    assert problem is not None
    assert f"playthrough_{pt.name}.txt differs first at step 7 (line {at + 1})" in problem
    assert lines[at] + " (changed)" in problem
    assert "python tests/engine/golden/make_playthroughs.py" in problem
    # A game cut short is named too (the text ends early).
    problem = first_difference(pt.name, text, "\n".join(lines[:at]) + "\n")
    assert problem is not None and "(end of output)" in problem


def test_playthroughs_cover_every_kind_of_step() -> None:
    """Together the games pass through every phase but the reshuffle (the record
    goldens have one), each action kind, and a game's end."""
    texts = [MAKER.path_of(p).read_text(encoding="utf-8") for p in MAKER.PLAYTHROUGHS]
    assert sum(t.count("\n") for t in texts) < 4000, "keep the playthroughs reviewable"
    everything = "\n".join(texts)
    for phase in Phase:
        if phase is not Phase.RESHUFFLE:
            assert f"phase={phase.name}" in everything, phase
    actions = [ln for ln in everything.splitlines() if ln.startswith("action: seat ")]
    for kind in ("draw stock", "draw discard", "discard", "close", "layoff", "laydown", "pass"):
        assert any(f" {kind}" in a for a in actions), kind
    assert "game over:" in everything
    assert "JK1" in everything  # jokers
    assert re.search(r"\b[89][OCEB]\b", everything)  # the 48-card deck's 8s and 9s
    assert any("obs 2:" in t for t in texts)  # a third seat


def test_make_playthroughs_check_passes() -> None:
    assert MAKER.main(["--check"]) == 0
