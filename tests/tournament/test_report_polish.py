"""The tournament report for people: report.md (date, duration, the rules as a table, a
plain sentence on ratings not yet told apart, a link to the plot), ratings.svg (opaque,
round ticks, a line at 1500) and terminal tables that fit the terminal."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from chinchon.engine import RuleSet
from chinchon_referee.config import Policies
from chinchon_referee.tournament.report import markdown, rating_svg, separation, write_results
from chinchon_referee.tournament.standings import Row, Standings
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def standings(*rows: tuple[str, float, float], games: int = 40) -> Standings:
    """Rows of (bot, rating, half-width of the 95% interval), best first."""
    return Standings(
        rows=[Row(bot=b, rank=i + 1, games=games, rating=r, rating_low=r - h, rating_high=r + h)
              for i, (b, r, h) in enumerate(rows)],
        head_to_head={}, games=games, duplicate_variance_reduction=None,
        rating_model="bradley-terry",
    )


def test_report_has_date_duration_rules_table_and_links_the_plot(tmp_path: Path) -> None:
    st = standings(("greedy", 1600, 120), ("random", 1400, 120))
    start = datetime(2026, 11, 30, 9, 15, tzinfo=UTC).timestamp()
    rules = RuleSet(jokers=2).to_dict()
    write_results(tmp_path, "Small cup", st, {"games": 40, "policies": asdict(Policies())},
                  rules=rules, started=start, finished=start + 3725)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "- **date**: 2026-11-30 09:15 UTC" in md
    assert "- **duration**: 1 h 02 min 05 s" in md
    assert "## Rules" in md and "| setting | value | meaning |" in md
    assert re.search(r"^\| jokers \| 2 \| number of jokers", md, re.M), md
    assert re.search(r"^\| open_discard \| yes \|", md, re.M), md
    # The house rules: cards as text, "none" for no wild card.
    assert re.search(r"^\| wild_cards \| none \| natural cards that are wild", md, re.M), md
    assert re.search(r"^\| close_first_round \| yes \|", md, re.M), md
    wild = markdown("cup", st, {}, "ratings.svg",
                    rules=RuleSet(wild_cards=("1O", "1C"), jokers_per_meld=1).to_dict())
    assert re.search(r"^\| wild_cards \| 1O 1C \|", wild, re.M), wild
    assert re.search(r"^\| jokers_per_meld \| 1 \| most jokers", wild, re.M), wild
    assert "## Policies" in md
    assert re.search(r"^\| max_strikes \| \d+ \| strikes .+ forfeit it \|$", md, re.M), md
    assert "{" not in md, "no raw JSON in the report"
    assert "![ratings](ratings.svg)" in md and "data:image" not in md
    assert (tmp_path / "ratings.svg").is_file()


def test_report_says_when_ratings_are_not_told_apart() -> None:
    close = standings(("a", 1530, 100), ("b", 1500, 100), ("c", 1300, 50), games=40)
    md = markdown("cup", close, {}, "ratings.svg")
    # a-b overlap: widths shrink as 1/sqrt(games): 40 * ((200 / 30) ** 2 - 1) = 1738 more.
    assert "a and b are not separated yet; about 1,800 more games would tell." in md
    assert "b and c" not in md  # 1400 > 1350: apart
    apart = standings(("a", 1700, 50), ("b", 1500, 50))
    assert "the order is settled" in markdown("cup", apart, {}, "ratings.svg")
    assert separation(apart) == []
    tied = standings(("a", 1500, 80), ("b", 1500, 80))
    assert separation(tied) == ["a and b are not separated yet, and show no difference so far."]


@given(
    gap=st.floats(1, 400), half_a=st.floats(1, 300), half_b=st.floats(1, 300),
    games=st.integers(1, 5000),
)
def test_more_games_estimate_separates_the_pair(gap: float, half_a: float, half_b: float,
                                                games: int) -> None:
    st_ = standings(("a", 1500 + gap, half_a), ("b", 1500, half_b), games=games)
    lines = separation(st_)
    if gap > half_a + half_b:
        assert lines == []
        return
    n = int(re.search(r"about ([\d,]+) more", lines[0])[1].replace(",", ""))  # type: ignore[index]
    shrink = math.sqrt(games / (games + n))
    assert (half_a + half_b) * shrink <= gap * 1.0001  # that many games would tell them apart


def _ticks(svg: ET.Element) -> list[float]:
    return [float(t.text or "") for t in svg.iter(f"{SVG}text")
            if t.get("text-anchor") == "middle" and t.get("fill") == "#555"]


def test_svg_is_opaque_with_round_ticks_and_a_line_at_1500() -> None:
    for st_ in (standings(("a", 1623.7, 87.3), ("b", 1391.2, 140.9)),
                standings(("a", 1800, 30), ("b", 1700, 30)),  # 1500 outside the intervals
                standings(("solo", 1500, 0.4))):
        svg = ET.fromstring(rating_svg(st_))
        first = next(iter(svg))
        assert first.tag == f"{SVG}rect" and first.get("fill") == "#fff", ET.tostring(first)
        assert first.get("width") == "100%" and first.get("height") == "100%"
        ticks = _ticks(svg)
        assert len(ticks) >= 2
        step = ticks[1] - ticks[0]
        mag = 10 ** math.floor(math.log10(step))
        assert round(step / mag, 6) in (1, 2, 5), ticks
        assert all(abs(v / step - round(v / step)) < 1e-6 for v in ticks), ticks
        assert ticks[0] <= min(1500, *(r.rating_low for r in st_.rows))
        assert ticks[-1] >= max(1500, *(r.rating_high for r in st_.rows))
        mean = [ln for ln in svg.iter(f"{SVG}line") if ln.get("class") == "mean"]
        assert len(mean) == 1
        grid = {float(t.text or ""): float(t.get("x") or 0) for t in svg.iter(f"{SVG}text")
                if t.get("fill") == "#555"}
        lo, hi = ticks[0], ticks[-1]
        want = grid[lo] + (1500 - lo) / (hi - lo) * (grid[hi] - grid[lo])
        assert abs(float(mean[0].get("x1") or 0) - want) < 0.2


def _width(cmd: str, columns: int) -> list[str]:
    env = dict(os.environ, COLUMNS=str(columns))
    out = subprocess.run([sys.executable, "-c", cmd], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=60, check=True).stdout
    return out.splitlines()


STANDINGS_TABLE = """
from chinchon_referee.tournament.standings import Row, Standings
from chinchon_referee.cli.tournament import console, standings_table
rows = [Row(bot=n, rank=i + 1, games=6, wins=3, losses=3, match_points=3, rating=1500 + i,
            rating_low=1400, rating_high=1600, p_better_than_next=0.5)
        for i, n in enumerate(["greedy-python-bot", "random-bot", "node-sample-bot"])]
st = Standings(rows=rows, head_to_head={}, games=9, duplicate_variance_reduction=None,
               rating_model="bradley-terry")
console.print(standings_table(st, "Small cup: standings after 9 games"))
"""


def test_standings_table_fits_the_terminal() -> None:
    narrow = _width(STANDINGS_TABLE, 60)
    assert max(len(ln) for ln in narrow) <= 60, narrow
    header = next(ln for ln in narrow if " bot " in ln)
    assert "…" not in "\n".join(narrow), "columns are left out whole, not cut"
    assert {"pts", "rating"} <= set(header.split()), header
    assert "left out" in " ".join(narrow)
    wide = _width(STANDINGS_TABLE, 200)
    assert max(len(ln) for ln in wide) <= 200
    header = next(ln for ln in wide if " bot " in ln)
    assert header.split() == ["#", "bot", "pts", "W-D-L", "hands", "chin", "pts/h", "ff/to/il",
                              "rating", "±95%", "P>nx"]
    assert "left out" not in " ".join(wide)


PRACTICE_REPORT = """
from chinchon_referee.cli.practice import PracticeReport, print_report
why = "7O does not fit on meld 2 (1C 2C 3C): a run takes the next card of its suit " * 3
print_report(PracticeReport(bot="my-bot", opponent="greedy", connected=True, seed="s",
    incidents=[{"kind": "illegal", "game_id": "practice-1-abcdef",
                "violation": "LAYOFF_DOES_NOT_FIT", "code": 3, "message": why}]))
"""


def test_practice_tables_fit_the_terminal() -> None:
    for columns in (60, 200):
        lines = _width(PRACTICE_REPORT, columns)
        table = [ln for ln in lines if ln[:1] in "┏┃┡│└"]
        assert table and max(len(ln) for ln in table) <= columns, lines
        assert "".join(ln.strip("│ ") for ln in table).count("LAYOFF_DOES_NOT_FIT") == 1
