"""docs/security.md names the test behind each point of the threat model: every name it
gives must be a test of this suite (so a renamed or deleted test cannot leave the
threat model pointing at nothing)."""

from __future__ import annotations

import ast
import re

from tests.support.helpers import ROOT


def _test_names() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    node.name.startswith("test_"):
                names.add(node.name)
    return names


def test_every_test_named_in_the_threat_model_exists() -> None:
    doc = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", doc))
    assert len(named) >= 30, "the threat model names the tests of each point"
    missing = sorted(named - _test_names())
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"
