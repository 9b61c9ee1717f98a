"""Tournament exports: standings (JSON, CSV), records, a Markdown report with a rating plot."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .standings import Standings


def rating_svg(st: Standings, width: int = 640) -> str:
    """A horizontal dot-and-whisker plot of ratings with their 95% intervals."""
    rows = st.rows
    if not rows:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    lo = min(r.rating_low for r in rows)
    hi = max(r.rating_high for r in rows)
    span = max(hi - lo, 1.0)
    left, right, top, step = 140, 30, 30, 28
    height = top + step * len(rows) + 30

    def x(v: float) -> float:
        return left + (v - lo) / span * (width - left - right)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<text x="{left}" y="16" font-weight="bold">Rating (Elo scale) with 95% interval '
        f'({st.rating_model})</text>',
    ]
    ticks = 5
    for i in range(ticks + 1):
        v = lo + span * i / ticks
        parts.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" '
                     f'y2="{height - 24}" stroke="#ddd"/>')
        parts.append(f'<text x="{x(v):.1f}" y="{height - 8}" text-anchor="middle" '
                     f'fill="#555">{v:.0f}</text>')
    for i, r in enumerate(rows):
        y = top + step * i + 10
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{_esc(r.bot)}</text>')
        parts.append(f'<line x1="{x(r.rating_low):.1f}" y1="{y}" x2="{x(r.rating_high):.1f}" '
                     f'y2="{y}" stroke="#36c" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(r.rating):.1f}" cy="{y}" r="4" fill="#036"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown(name: str, st: Standings, info: dict[str, Any], plot_ref: str | None = None) -> str:
    """The report. ``plot_ref``: where the SVG plot is (default: embedded as a data URI)."""
    lines = [f"# {name}", ""]
    for k, v in info.items():
        lines.append(f"- **{k}**: {v}")
    lines += ["", "## Standings", ""]
    lines.append("| # | bot | points | games | W | D | L | hands won | chinchón | pts/hand | "
                 "forfeits | timeouts | illegal | rating | 95% interval | P(> next) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in st.rows:
        p = "" if r.p_better_than_next is None else f"{r.p_better_than_next:.2f}"
        lines.append(
            f"| {r.rank} | {r.bot} | {r.match_points:g} | {r.games} | {r.wins} | {r.draws} | "
            f"{r.losses} | {r.hands_won} | {r.chinchones} | {r.avg_points_per_hand:.2f} | "
            f"{r.forfeits} | {r.timeouts} | {r.illegal_actions} | {r.rating:.0f} | "
            f"{r.rating_low:.0f} – {r.rating_high:.0f} | {p} |"
        )
    bots = [r.bot for r in st.rows]
    lines += ["", "## Head to head", "",
              "Match points of the row's bot against the column's (games in brackets).", ""]
    lines.append("| | " + " | ".join(bots) + " |")
    lines.append("|---" * (len(bots) + 1) + "|")
    for a in bots:
        cells = []
        for b in bots:
            if a == b:
                cells.append("—")
            else:
                s, n = st.head_to_head.get((a, b), (0.0, 0))
                cells.append(f"{s:g} ({n})" if n else "")
        lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    lines += ["", "## Ratings", ""]
    if plot_ref is None:
        data = base64.b64encode(rating_svg(st).encode()).decode()
        plot_ref = f"data:image/svg+xml;base64,{data}"
    lines.append(f"![ratings]({plot_ref})")
    lines.append("")
    if st.duplicate_variance_reduction is not None:
        lines.append(
            f"Duplicate deals removed **{st.duplicate_variance_reduction:.0%}** of the variance "
            "of game scores that independent deals would have had (1 − Var(duplicate-pair "
            "mean) / (Var(single game) / 2), per bot pair)."
        )
    else:
        lines.append("Duplicate deals: not enough paired games to measure their effect.")
    lines.append("")
    return "\n".join(lines)


def write_results(
    folder: Path, name: str, st: Standings, records: Sequence[dict[str, Any]],
    info: dict[str, Any],
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rec_dir = folder / "records"
    rec_dir.mkdir(exist_ok=True)
    written = []
    for rec in records:
        p = rec_dir / f"{rec['gameId']}.json"
        p.write_text(json.dumps(rec, indent=1, ensure_ascii=False), encoding="utf-8")
    written.append(rec_dir)
    (folder / "standings.json").write_text(json.dumps(st.to_json(), indent=2), encoding="utf-8")
    (folder / "standings.csv").write_text(st.to_csv(), encoding="utf-8")
    (folder / "ratings.svg").write_text(rating_svg(st), encoding="utf-8")
    (folder / "report.md").write_text(markdown(name, st, info, "ratings.svg"), encoding="utf-8")
    written += [folder / n for n in ("standings.json", "standings.csv", "ratings.svg", "report.md")]
    return written
