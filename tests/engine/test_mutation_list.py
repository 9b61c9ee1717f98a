"""bench/mutate_engine.py's mutants still apply to the engine's source: each piece of
code it replaces occurs exactly once in its file, and the planted file compiles. (The
mutation check itself takes minutes, so it is a bench script: docs/testing.md.) This
file is outside tests/engine/test_engine_*.py on purpose: the check runs those tests against
each mutant, and a test that reads the source would catch every mutant for nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("mutate_engine", ROOT / "bench" / "mutate_engine.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate_engine", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


MUT = _load()


@pytest.mark.parametrize("mutant", MUT.MUTANTS, ids=lambda m: m.name)
def test_each_mutant_plants_one_change_that_compiles(mutant: Any) -> None:
    planted = MUT.mutated_source(mutant)
    assert planted != (MUT.ENGINE / mutant.file).read_text(encoding="utf-8")
    compile(planted, mutant.file, "exec")


def test_the_mutants_are_named_once_and_cover_the_house_rules() -> None:
    names = [m.name for m in MUT.MUTANTS]
    assert len(names) == len(set(names))
    assert len(names) >= 16
    for rule in ("layoff-best", "wild-card", "jokers-per-meld", "first-round"):
        assert any(n.startswith(rule) for n in names), rule
    # The check runs exactly the engine tests: every tests/engine/test_engine_*.py file.
    assert sorted(MUT.TEST_FILES) == sorted(
        f"tests/engine/{p.name}" for p in (ROOT / "tests" / "engine").glob("test_engine_*.py"))


def test_a_mutant_that_no_longer_applies_is_refused_by_name() -> None:
    stale = MUT.Mutant("stale", "game.py", "this text is not in the engine", "x", "nothing")
    with pytest.raises(ValueError, match=r"mutant stale: .* occurs 0 times in game\.py"):
        MUT.mutated_source(stale)
