"""What ``chinchon match`` shows and leaves: the live line, how the match ended (and its
exit code), and the results folder (summary.json, summary.md, pairs.csv, records/)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..storage import Store
from ..tournament.elo import EloEstimate, estimate
from ..tournament.match import CANDIDATE, GameScore, Side, Tally
from ..tournament.sprt import SprtSpec, Verdict
from .records import write_run_records
from .standings_table import console

#: Exit codes: H1 accepted (or every game played without a test), H0 accepted, the
#: game limit reached with the test undecided.
EXIT_H1 = 0
EXIT_H0 = 1
EXIT_INCONCLUSIVE = 3


@dataclass(frozen=True)
class Outcome:
    """How a match ended: the test's verdict (None without --sprt), its LLR then, and
    whether every scheduled game was played."""

    verdict: Verdict | None
    llr: float | None
    complete: bool
    seconds: float = 0.0

    @classmethod
    def limit(cls, sprt: SprtSpec | None, tally: Tally, seconds: float) -> Outcome:
        """Every game played."""
        if sprt is None:
            return cls(None, None, True, seconds)
        side = next(iter(tally.sides.values()))
        llr = sprt.llr(side.pentanomial)
        return cls(sprt.verdict(llr), llr, True, seconds)

    @classmethod
    def of(cls, stored: dict[str, Any]) -> Outcome:
        v = stored.get("verdict")
        return cls(Verdict(v) if v else None, stored.get("llr"), bool(stored.get("complete")),
                   float(stored.get("seconds", 0.0)))

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value if self.verdict else None, "llr": self.llr,
                "complete": self.complete, "seconds": self.seconds}


def exit_code(outcome: Outcome) -> int:
    if outcome.verdict is Verdict.H0:
        return EXIT_H0
    if outcome.verdict is Verdict.CONTINUE:
        return EXIT_INCONCLUSIVE
    return EXIT_H1


def _signed(x: float) -> str:
    return f"{x:+.1f}"


def side_line(side: Side, e: EloEstimate) -> str:
    """``Elo +12.3 [+1.0, +23.9] score 0.518 W-D-L 40-2-31 pairs 36``"""
    forfeits = side.forfeits_candidate + side.forfeits_opponent
    line = (f"Elo {_signed(e.elo)} [{_signed(e.low)}, {_signed(e.high)}] "
            f"score {e.score:.3f} W-D-L {side.wins}-{side.draws}-{side.losses} "
            f"pairs {side.pentanomial.pairs}")
    if forfeits:
        line += f" forfeits {side.forfeits_candidate}/{side.forfeits_opponent}"
    return line


class MatchProgress:
    """The live line: pairs played (of the limit), Elo with its interval, and the LLR
    with its bounds."""

    def __init__(self, opponents: tuple[str, ...], pairs: int, sprt: SprtSpec | None,
                 quiet: bool) -> None:
        self.opponents = opponents
        self.sprt = sprt
        self.progress = Progress(
            TextColumn("[bold]match"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.fields[line]}"), console=console, disable=quiet,
            transient=False)
        self.bar = self.progress.add_task("pairs", total=pairs * len(opponents), line="")

    def __enter__(self) -> MatchProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.progress.__exit__(t, e, tb)

    def update(self, tally: Tally) -> None:
        side = tally.total
        line = side_line(side, estimate(side.pentanomial))
        if self.sprt is not None:
            llr = self.sprt.llr(side.pentanomial)
            line += f" LLR {llr:.2f} ({self.sprt.lower:.2f}, {self.sprt.upper:.2f})"
        self.progress.update(self.bar, completed=side.pentanomial.pairs, line=line)


def summary(tally: Tally, sprt: SprtSpec | None, outcome: Outcome | None) -> dict[str, Any]:
    opponents = {}
    for name, side in tally.sides.items():
        e = estimate(side.pentanomial)
        opponents[name] = {**side.to_dict(), "score": e.score, "elo": e.elo,
                           "elo_low": e.low, "elo_high": e.high, "elo_half_width": e.half_width,
                           "los": e.los}
    out: dict[str, Any] = {"candidate": CANDIDATE, "opponents": opponents}
    if len(tally.sides) > 1:
        total = tally.total
        e = estimate(total.pentanomial)
        out["all_opponents"] = {**total.to_dict(), "elo": e.elo, "elo_low": e.low,
                                "elo_high": e.high}
    if sprt is not None:
        out["sprt"] = {**sprt.to_dict(), "lower_bound": sprt.lower, "upper_bound": sprt.upper}
    if outcome is not None:
        out["end"] = outcome.to_dict()
        games = sum(s.games for s in tally.sides.values())
        if outcome.seconds > 0:
            out["end"]["games_per_second_this_run"] = games / outcome.seconds
    else:
        out["end"] = {"verdict": None, "interrupted": True}
    return out


def _markdown(data: dict[str, Any]) -> str:
    lines = ["# Match", "", "| opponent | pairs | pentanomial (LL..WW) | W-D-L | forfeits "
             "(candidate/opponent) | score | Elo | 95% interval | LOS |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, o in data["opponents"].items():
        lines.append(
            f"| {name} | {o['pairs']} | {' '.join(map(str, o['pentanomial']))} | "
            f"{o['wins']}-{o['draws']}-{o['losses']} | {o['forfeits_by_candidate']}/"
            f"{o['forfeits_by_opponent']} | {o['score']:.3f} | {o['elo']:+.1f} | "
            f"[{o['elo_low']:+.1f}, {o['elo_high']:+.1f}] | {o['los']:.3f} |")
    end = data["end"]
    if "sprt" in data:
        s = data["sprt"]
        lines += ["", f"SPRT elo0={s['elo0']:g} elo1={s['elo1']:g} alpha={s['alpha']:g} "
                  f"beta={s['beta']:g}: bounds ({s['lower_bound']:.2f}, {s['upper_bound']:.2f})"]
        if end.get("llr") is not None:
            lines.append(f"LLR {end['llr']:.2f}: {verdict_text(end.get('verdict'))}")
    if end.get("interrupted"):
        lines += ["", "Interrupted: run the same command again to resume."]
    return "\n".join(lines) + "\n"


def verdict_text(verdict: str | None) -> str:
    return {"H1": "H1 accepted (the candidate is at least elo1 stronger)",
            "H0": "H0 accepted (the candidate is not elo1 stronger)",
            "continue": "inconclusive at the game limit"}.get(verdict or "", "")


def write_outputs(store: Store, tid: str, out: Path, opponents: tuple[str, ...],
                  sprt: SprtSpec | None, tally: Tally, outcome: Outcome | None) -> None:
    """summary.json, summary.md, pairs.csv and records/ in ``out``; the summary printed."""
    data = summary(tally, sprt, outcome)
    (out / "summary.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    text = _markdown(data)
    (out / "summary.md").write_text(text, encoding="utf-8")
    _pairs_csv(store, tid, out / "pairs.csv")
    n = write_run_records(store, tid, out, "json.gz")
    for name, side in tally.sides.items():
        console.print(Text(f"candidate vs {name}: {side_line(side, estimate(side.pentanomial))}"))
    if outcome is not None and outcome.llr is not None and sprt is not None:
        console.print(Text(f"LLR {outcome.llr:.2f} ({sprt.lower:.2f}, {sprt.upper:.2f}): "
                           f"{verdict_text(outcome.verdict.value if outcome.verdict else None)}"))
    console.print(Text(f"results in {out}/: summary.json, summary.md, pairs.csv, {n} records "
                       "in records/, the database match.sqlite3"))


def _pairs_csv(store: Store, tid: str, path: Path) -> None:
    """One line per finished game: its pair, seat, result for the candidate, forfeit."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["game", "deal", "players", "candidate_seat", "candidate_score",
                    "termination", "forfeited_by"])
        after = 0
        while page := store.finished_scores(tid, after, 2000):
            for row in page:
                if row.result is None:
                    continue
                g = GameScore.of(row.players, row.deal_id, row.result)
                w.writerow([row.id, row.deal_id, " ".join(row.players),
                            row.players.index(CANDIDATE), g.halves / 2,
                            row.result.termination.name.lower(), g.forfeited_by])
            after = page[-1].seq
