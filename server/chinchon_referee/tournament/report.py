"""Tournament exports: standings (JSON, CSV), a Markdown report with a rating plot (the
records are written by :mod:`.record_files`)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chinchon.engine import OPTIONS

from .formats.render import markdown as structure_markdown
from .standings import Standings
from .tiebreaks import sentence

if TYPE_CHECKING:
    from ..storage import TournamentRow
    from .model import TournamentSpec

MEAN_RATING = 1500.0
_RULE_HELP = {o.name: o.help for o in OPTIONS}
#: What each of a tournament's policies (config.Policies) means, for the report's table.
_HELPS: dict[str, dict[str, str]] = {
    "policies": {
        "max_illegal_retries": "illegal answers refused per request before the default "
                               "action (and a strike)",
        "max_strikes": "strikes (default actions) in one game that forfeit it",
        "reconnect_grace": "seconds a disconnected bot keeps its seat",
        "absence_limit": "seconds of absence after which a bot's remaining games forfeit",
    },
}


def nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering ``lo``..``hi``."""
    span = max(hi - lo, 1e-9)
    raw = span / max(most - 1, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1.0, 2.0, 5.0, 10.0) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    v = first
    while v < hi + step * 0.999:
        ticks.append(round(v, 9))
        v += step
    return ticks


def rating_svg(st: Standings, width: int = 640) -> str:
    """A horizontal dot-and-whisker plot of ratings with their 95% intervals.

    Drawn on an opaque white background (it stays readable on a dark page), with round
    axis ticks and a dashed line at 1500, the mean rating.
    """
    rows = st.rows
    if not rows:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
                '<rect width="100%" height="100%" fill="#fff"/></svg>')
    ticks = nice_ticks(min(MEAN_RATING, *(r.rating_low for r in rows)),
                       max(MEAN_RATING, *(r.rating_high for r in rows)))
    lo, hi = ticks[0], ticks[-1]
    span = max(hi - lo, 1.0)
    left, right, top, step = 140, 30, 30, 28
    height = top + step * len(rows) + 30

    def x(v: float) -> float:
        return left + (v - lo) / span * (width - left - right)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="#fff"/>',
        f'<text x="{left}" y="16" font-weight="bold">Rating (Elo scale) with 95% interval '
        f'({_esc(st.rating_model)})</text>',
    ]
    for v in ticks:
        parts.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" '
                     f'y2="{height - 24}" stroke="#ddd"/>')
        parts.append(f'<text x="{x(v):.1f}" y="{height - 8}" text-anchor="middle" '
                     f'fill="#555">{v:g}</text>')
    parts.append(f'<line class="mean" x1="{x(MEAN_RATING):.1f}" y1="{top - 6}" '
                 f'x2="{x(MEAN_RATING):.1f}" y2="{height - 24}" stroke="#999" '
                 'stroke-dasharray="4 3"/>')
    for i, r in enumerate(rows):
        y = top + step * i + 10
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{_esc(r.bot)}</text>')
        parts.append(f'<line x1="{x(r.rating_low):.1f}" y1="{y}" x2="{x(r.rating_high):.1f}" '
                     f'y2="{y}" stroke="#36c" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(r.rating):.1f}" cy="{y}" r="4" fill="#036"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def separation(st: Standings) -> list[str]:
    """A plain sentence for each pair of neighbours whose 95% intervals overlap.

    Interval widths shrink as one over the square root of the games played, so the pair
    is told apart once the games grow by (sum of half-widths / rating gap) squared.
    """
    out = []
    for a, b in zip(st.rows, st.rows[1:], strict=False):
        if a.rating_low > b.rating_high or b.rating_low > a.rating_high:
            continue
        gap = abs(a.rating - b.rating)
        halves = (a.rating_high - a.rating_low) / 2 + (b.rating_high - b.rating_low) / 2
        if gap < 1e-6 or st.games <= 0:
            out.append(f"{a.bot} and {b.bot} are not separated yet, and show no difference "
                       "so far.")
            continue
        more = math.ceil(st.games * ((halves / gap) ** 2 - 1))
        out.append(f"{a.bot} and {b.bot} are not separated yet; about {_round(more):,} more "
                   "games would tell.")
    return out


def _round(n: int) -> int:
    """``n`` to two significant digits (an estimate should not look exact)."""
    if n < 100:
        return max(n, 1)
    mag = 10 ** (len(str(n)) - 2)
    return int(-(-n // mag) * mag)


def when(started: float | None, finished: float | None) -> dict[str, str]:
    """The report's date and duration lines (UTC), for what is known."""
    out: dict[str, str] = {}
    if started is not None:
        out["date"] = datetime.fromtimestamp(started, UTC).strftime("%Y-%m-%d %H:%M UTC")
        if finished is not None and finished >= started:
            secs = round(finished - started)
            h, rest = divmod(secs, 3600)
            m, s = divmod(rest, 60)
            out["duration"] = f"{h} h {m:02d} min {s:02d} s" if h else f"{m} min {s:02d} s"
    return out


def _table(title: str, values: Mapping[str, Any], helps: Mapping[str, str]) -> list[str]:
    lines = [f"## {title}", "", "| setting | value | meaning |", "|---|---|---|"]
    for k, v in values.items():
        shown = (("yes" if v else "no") if isinstance(v, bool)
                 else " ".join(map(str, v)) or "none" if isinstance(v, (list, tuple)) else str(v))
        lines.append(f"| {k} | {_cell(shown)} | {_cell(helps.get(k, ''))} |")
    return [*lines, ""]


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown(
    name: str, st: Standings, info: dict[str, Any], plot_ref: str | None = None, *,
    rules: Mapping[str, Any] | None = None, started: float | None = None,
    finished: float | None = None, structure: Mapping[str, Any] | None = None,
) -> str:
    """The report. ``plot_ref``: where the SVG plot is (default: embedded as a data URI;
    GitHub shows no such image, so a report written to files links ``ratings.svg``).
    ``rules``: the rule set (``RuleSet.to_dict()``), shown as a table; ``started`` and
    ``finished`` (``time.time()`` values) give the date and duration. An ``info`` value
    that is a mapping is shown as a table of its own. ``structure``: the tournament's
    stages, rounds and bracket (formats/structure.py), shown after the standings."""
    lines = [f"# {name}", ""]
    tables: list[str] = []
    for k, v in {**when(started, finished), **info}.items():
        if isinstance(v, Mapping):
            tables += _table(k[:1].upper() + k[1:], v, _HELPS.get(k, {}))
        else:
            lines.append(f"- **{k}**: {v}")
    lines.append("")
    if rules is not None:
        lines += _table("Rules", rules, _RULE_HELP)
    lines += tables
    lines += _standings_rows(st)
    lines += ["", sentence(st.tiebreaks)]
    if structure is not None:
        lines += ["", *structure_markdown(structure)]
    lines += _head_to_head(st)
    lines += _ratings(st, plot_ref)
    return "\n".join(lines)


def _standings_rows(st: Standings) -> list[str]:
    lines = ["## Standings", ""]
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
    return lines


def _head_to_head(st: Standings) -> list[str]:
    bots = [r.bot for r in st.rows]
    lines = ["", "## Head to head", "",
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
    return lines


def _ratings(st: Standings, plot_ref: str | None) -> list[str]:
    """The ratings' plot (embedded unless ``plot_ref`` names its file), whether the order is
    settled, and what duplicate deals did."""
    lines = ["", "## Ratings", ""]
    if plot_ref is None:
        data = base64.b64encode(rating_svg(st).encode()).decode()
        plot_ref = f"data:image/svg+xml;base64,{data}"
    lines.append(f"![ratings]({plot_ref})")
    lines.append("")
    overlaps = separation(st)
    if overlaps:
        lines += [*overlaps, ""]
    elif len(st.rows) > 1:
        lines += ["Every bot's 95% interval is clear of its neighbours': the order is settled.",
                  ""]
    if st.duplicate_variance_reduction is not None:
        lines.append(
            f"Duplicate deals removed **{st.duplicate_variance_reduction:.0%}** of the variance "
            "of game scores that independent deals would have had (1 − Var(duplicate-pair "
            "mean) / (Var(single game) / 2), per bot pair)."
        )
    else:
        lines.append("Duplicate deals: not enough paired games to measure their effect.")
    lines.append("")
    return lines


def write_standings(folder: Path, standings_json: dict[str, Any], standings_csv: str) -> None:
    """``standings.json`` and ``standings.csv`` in ``folder``."""
    (folder / "standings.json").write_text(json.dumps(standings_json, indent=2),
                                           encoding="utf-8")
    (folder / "standings.csv").write_text(standings_csv, encoding="utf-8")


def write_results(
    folder: Path, name: str, st: Standings, info: dict[str, Any], *,
    rules: Mapping[str, Any] | None = None, started: float | None = None,
    finished: float | None = None, structure: Mapping[str, Any] | None = None,
) -> list[Path]:
    """``standings.json``, ``standings.csv``, ``ratings.svg`` and ``report.md`` in
    ``folder``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    write_standings(folder, st.to_json(), st.to_csv())
    (folder / "ratings.svg").write_text(rating_svg(st), encoding="utf-8")
    (folder / "report.md").write_text(markdown(name, st, info, "ratings.svg", rules=rules,
                                               started=started, finished=finished,
                                               structure=structure), encoding="utf-8")
    written += [folder / n for n in ("standings.json", "standings.csv", "ratings.svg", "report.md")]
    if structure is not None:
        write_structure(folder, structure)
        written.append(folder / "structure.json")
    return written


def write_structure(folder: Path, structure: Mapping[str, Any]) -> None:
    """``structure.json``: a format's stages, rounds and bracket (docs/tournaments.md)."""
    (folder / "structure.json").write_text(json.dumps(structure, indent=2), encoding="utf-8")


@dataclass(frozen=True)
class TournamentReport:
    """What a tournament's report says besides its standings: the one writer of
    report.md for ``chinchon tournament run`` and ``chinchon admin export`` (the admin
    service's ``ExportRecords``/``ExportResults``), so both say the same."""

    name: str
    info: dict[str, Any]
    rules: dict[str, Any]
    started: float | None
    finished: float | None
    #: A format's stages, rounds and bracket (formats/structure.py; None: a round-robin
    #: declared without a format).
    structure: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, tid: str, spec: TournamentSpec, st: Standings, row: TournamentRow | None,
           finished: float | None = None, structure: Mapping[str, Any] | None = None
           ) -> TournamentReport:
        """The report of tournament ``tid`` declared as ``spec``, stored as ``row``;
        ``finished``: when it ended, if the row does not say (an interrupted run);
        ``structure``: its format's stages, rounds and bracket."""
        info: dict[str, Any] = {"tournament": tid}
        if row is not None:
            info["status"] = str(row.status)
        info.update({
            "games": st.games, "table size": spec.table_size,
            "time control": f"{spec.time_control.per_move:g} s per move + "
                            f"{spec.time_control.bank:g} s bank",
            "policies": asdict(spec.policies)})
        if structure is not None:
            info["format"] = " then ".join(s.title for s in spec.format.stages)
        return cls(spec.name, info, spec.rules.to_dict(), row.started if row else None,
                   (row.finished if row else None) or finished, structure)

    def markdown(self, st: Standings) -> str:
        """report.md, its chart linked as ``ratings.svg`` (written beside it)."""
        return markdown(self.name, st, self.info, "ratings.svg", rules=self.rules,
                        started=self.started, finished=self.finished, structure=self.structure)

    def write(self, folder: Path, st: Standings) -> list[Path]:
        """standings.json, standings.csv, ratings.svg and report.md in ``folder`` (and a
        format's structure.json)."""
        return write_results(folder, self.name, st, self.info, rules=self.rules,
                             started=self.started, finished=self.finished,
                             structure=self.structure)
