"""docs/bots.md, the guide for bot authors: its violation list is the engine's enum,
exactly, and what it says about card text holds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from chinchon.engine import Violation, parse_card
from chinchon.engine.errors import MalformedInput
from chinchon_referee.tools.violations_doc import BEGIN, END, MEANING

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "bots.md"
TOOL = [sys.executable, "-m", "chinchon_referee.tools.violations_doc"]


def listed_codes(text: str) -> list[str]:
    """The codes in the first column of the generated table, read independently of the
    generator."""
    block = text[text.index(BEGIN):text.index(END)]
    return re.findall(r"^\| `([A-Z_]+)` \|", block, flags=re.MULTILINE)


def test_the_guide_lists_exactly_the_violation_codes_in_enum_order() -> None:
    assert listed_codes(DOC.read_text(encoding="utf-8")) == [v.value for v in Violation]
    assert set(MEANING) == set(Violation)


def test_the_generated_list_is_current() -> None:
    proc = subprocess.run([*TOOL, "--check"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "violation list is current" in proc.stdout


def test_a_stale_list_is_caught_and_rewritten(tmp_path: Path) -> None:
    doc = tmp_path / "bots.md"
    text = DOC.read_text(encoding="utf-8")
    stale = "\n".join(ln for ln in text.splitlines() if "`OWN_MELD`" not in ln) + "\n"
    doc.write_text(stale, encoding="utf-8")
    check = subprocess.run([*TOOL, "--check", "--doc", str(doc)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 1 and "stale" in check.stderr
    assert doc.read_text(encoding="utf-8") == stale  # --check changes nothing
    fix = subprocess.run([*TOOL, "--doc", str(doc)], capture_output=True, text=True, timeout=60)
    assert fix.returncode == 0, fix.stderr
    assert listed_codes(doc.read_text(encoding="utf-8")) == [v.value for v in Violation]


def test_a_doc_without_the_markers_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "bots.md"
    doc.write_text("# no list here\n", encoding="utf-8")
    proc = subprocess.run([*TOOL, "--doc", str(doc)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0 and "violations_doc: no" in proc.stderr
    assert doc.read_text(encoding="utf-8") == "# no list here\n"


def test_card_text_pitfalls_are_as_the_guide_says() -> None:
    assert str(parse_card("1O")) == "1O" and str(parse_card("10O")) == "10O"
    assert parse_card("1O") != parse_card("10O")
    for bad in ("10", "1", "O1", "JK", "JK3"):
        with pytest.raises(MalformedInput):
            parse_card(bad)


def test_the_readmes_send_bot_authors_to_the_guide() -> None:
    for readme in ("README.md", "sample_bots/node/README.md", "sample_bots/cpp/README.md"):
        assert "docs/bots.md" in (ROOT / readme).read_text(encoding="utf-8"), readme
