"""One bot's page (``/b/NAME``, its data ``/api/b/NAME``): its tournament games, its
results, forfeits, timeouts, illegal attempts and strikes, and how long it takes to
answer.

Everything here is public already on the tournament pages (results, the event log's
counts); no card is read but the records' think times. Runs in a worker thread (it reads
the database)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from .reader import FinishedGame, Reader, TournamentSummary
from .views import ResultFilter, outcome_for

#: Games listed on the page (the newest).
LISTED = 200
#: Records read for the answer times (the newest games'): a bounded cost per page.
TIMED_GAMES = 50
#: The longest bot name asked for.
MAX_BOT_NAME = 100


@dataclass
class Figures:
    """One bot's totals over its finished games."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    timeouts: int = 0
    illegal: int = 0
    strikes: int = 0
    decisions: int = 0
    think_time: float = 0.0
    answers: list[float] = field(default_factory=list)

    def add(self, game: FinishedGame, name: str) -> ResultFilter:
        seat = game.players.index(name)
        how = outcome_for(game, name)
        self.games += 1
        if how is ResultFilter.WIN:
            self.wins += 1
        elif how is ResultFilter.DRAW:
            self.draws += 1
        else:
            self.losses += 1
        if game.result.forfeited == seat:
            self.forfeits += 1
        st = game.stats[seat] if seat < len(game.stats) else {}
        self.timeouts += int(st.get("timeouts", 0))
        self.illegal += int(st.get("illegal", 0))
        self.strikes += int(st.get("strikes", 0))
        self.decisions += int(st.get("decisions", 0))
        self.think_time += float(st.get("think_time", 0.0))
        return how

    def to_json(self) -> dict[str, Any]:
        a = self.answers
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "forfeits": self.forfeits, "timeouts": self.timeouts, "illegal": self.illegal,
            "strikes": self.strikes, "decisions": self.decisions,
            "mean_answer": self.think_time / self.decisions if self.decisions else None,
            "median_answer": statistics.median(a) if a else None,
            "timed_answers": len(a),
        }


def _seconds(text: Any) -> float | None:
    if isinstance(text, str) and text.endswith("s"):
        try:
            return float(text[:-1])
        except ValueError:
            return None
    return None


def answer_times(record: dict[str, Any], seat: int) -> list[float]:
    """The think times of ``seat``'s answers in ``record`` (its defaults left out: the
    referee played them)."""
    out = []
    for step in record.get("actions", []):
        mv = step.get("move") if isinstance(step, dict) else None
        if (isinstance(mv, dict) and mv.get("seat", 0) == seat
                and mv.get("origin", "ACTION_ORIGIN_PLAYER") == "ACTION_ORIGIN_PLAYER"):
            t = _seconds(mv.get("thinkTime"))
            if t is not None:
                out.append(t)
    return out


def _participants(t: TournamentSummary) -> list[str]:
    return [str(p.get("name", "")) for p in t.spec.get("participants", [])]


def bot_page(reader: Reader, name: str) -> dict[str, Any] | None:
    """The page's data for bot ``name``; None if no tournament has it."""
    tours = [t for t in reader.tournaments() if name in _participants(t)]
    if not tours:
        return None
    total = Figures()
    figs: dict[str, Figures] = {}
    played: list[tuple[TournamentSummary, FinishedGame, ResultFilter]] = []
    for t in tours:
        fig = figs[t.id] = Figures()
        for g in reader.finished_games(t.id):
            if name in g.players:
                how = fig.add(g, name)
                total.add(g, name)
                played.append((t, g, how))
    played.sort(key=lambda x: x[1].finished or 0.0, reverse=True)
    for t, g, _ in played[:TIMED_GAMES]:
        stored = reader.record(g.id)
        if stored is not None and stored.record is not None:
            times = answer_times(stored.record, g.players.index(name))
            total.answers += times
            figs[t.id].answers += times  # its row's median: of the same timed games
    per_tournament = [{"id": t.id, "name": t.name, "status": t.status.value,
                       **figs[t.id].to_json()} for t in tours]
    games = [{
        "id": g.id, "tournament": t.id, "players": g.players, "result": how.value,
        "termination": g.result.termination.value, "summary": g.result.summary,
        "totals": list(g.result.totals), "hands": g.result.hands_played,
        "finished": g.finished, **_seat_stats(g, name),
    } for t, g, how in played[:LISTED]]
    return {"name": name, "figures": total.to_json(), "timed_games": min(len(played), TIMED_GAMES),
            "tournaments": per_tournament, "games": games, "listed": LISTED}


def _seat_stats(g: FinishedGame, name: str) -> dict[str, Any]:
    seat = g.players.index(name)
    st = g.stats[seat] if seat < len(g.stats) else {}
    return {"seat": seat, "timeouts": int(st.get("timeouts", 0)),
            "illegal": int(st.get("illegal", 0)), "strikes": int(st.get("strikes", 0))}
