"""The standings as a terminal table (``chinchon tournament run``/``standings`` and
``chinchon admin standings``): a module of its own, so that the admin client prints it
without loading the tournament runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from ..tournament.standings import Row, Standings

console = Console(highlight=False, soft_wrap=True)

#: The standings columns after the rank and the bot: (header, what it says, its cell).
_STANDINGS_COLUMNS: tuple[tuple[str, str, Callable[[Row], str]], ...] = (
    ("pts", "match points (win 1, draw ½)", lambda r: f"{r.match_points:g}"),
    ("W-D-L", "", lambda r: f"{r.wins}-{r.draws}-{r.losses}"),
    ("hands", "hands won", lambda r: str(r.hands_won)),
    ("chin", "chinchones", lambda r: str(r.chinchones)),
    ("pts/h", "points per hand", lambda r: f"{r.avg_points_per_hand:.1f}"),
    ("ff/to/il", "forfeits, timeouts, illegal actions",
     lambda r: f"{r.forfeits}/{r.timeouts}/{r.illegal_actions}"),
    ("rating", "", lambda r: f"{r.rating:.0f}"),
    ("±95%", "half-width of the rating's 95% interval",
     lambda r: f"{(r.rating_high - r.rating_low) / 2:.0f}"),
    ("P>nx", "likelihood of being stronger than the next bot",
     lambda r: "" if r.p_better_than_next is None else f"{r.p_better_than_next:.2f}"),
)
#: Which columns a narrow terminal loses first.
_DROP_ORDER = ("chin", "pts/h", "hands", "P>nx", "±95%", "W-D-L", "ff/to/il", "rating")


def standings_table(st: Standings, title: str, width: int | None = None) -> Table:
    """The standings as a terminal table that fits ``width`` columns (default: the
    terminal's): on a narrow one the least needed columns are left out, whole."""
    width = width or console.width
    shown = [c[0] for c in _STANDINGS_COLUMNS]
    while True:
        t = _standings_table(st, title, shown)
        if console.measure(t, options=console.options.update_width(10_000)).maximum <= width:
            break
        drop = next((c for c in _DROP_ORDER if c in shown), None)
        if drop is None:
            break
        shown.remove(drop)
    notes = "; ".join(f"{h}: {what}" for h, what, _ in _STANDINGS_COLUMNS if h in shown and what)
    left_out = [c[0] for c in _STANDINGS_COLUMNS if c[0] not in shown]
    if left_out:
        notes += f" ({', '.join(left_out)}: left out, too narrow; see standings.csv)"
    t.caption = Text(notes, no_wrap=False, overflow="fold", justify="left")
    return t


def _standings_table(st: Standings, title: str, shown: list[str]) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    longest = max((len(r.bot) for r in st.rows), default=3)
    t.add_column("#", justify="right")
    t.add_column("bot", no_wrap=True, min_width=longest)
    cols = [c for c in _STANDINGS_COLUMNS if c[0] in shown]
    for h, _, _ in cols:
        t.add_column(h, justify="right", no_wrap=True)
    for r in st.rows:
        t.add_row(str(r.rank), r.bot, *(cell(r) for _, _, cell in cols))
    return t


def format_summary(structure: Mapping[str, Any]) -> Markdown:
    """A format's stages, Swiss rounds and bracket (formats/structure.py's JSON) for the
    terminal, as report.md has them."""
    from ..tournament.formats.render import markdown

    return Markdown("\n".join(markdown(structure)))
