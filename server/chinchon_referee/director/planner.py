"""A tournament's games created as they come due: the format asked for its next games
whenever results arrive (``formats.plan.next_games``), and what it asks for stored.

Every declaration takes one road, its plan's (``formats.chain.plan_of``): the
round-robin declared without a format has its whole schedule stored when it is
declared (:func:`first_games`), and nothing is ever asked again; every other format
stores its first games when it is declared (the first Swiss round, the first matches'
first games, a gauntlet's or a round-robin stage's games) and the rest one step at a
time: :meth:`Planner.advance` reads every stored game of the tournament, asks the
format, and stores the games it names, each unless its id is stored already
(``Store.add_games``). The format's answer is a function of the declaration (its seed
included) and the finished games only, so a resumed run, or another process sharing
the database, computes the same games with the same ids: each game is created once,
whoever computes it and however often.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..logs import get_logger
from ..storage import GameRow, Store
from ..tournament.formats.chain import plan_of, stored_games
from ..tournament.formats.games import Create, NewGame
from ..tournament.formats.plan import Next
from ..tournament.model import TournamentSpec
from ..vocabulary import GameStatus

log = get_logger("director")


def rows_of(tid: str, games: Iterable[NewGame]) -> list[GameRow]:
    """The stored rows of games a format asks for."""
    return [GameRow(g.id, tid, g.seq, list(g.players), g.deal_id) for g in games]


def first_games(spec: TournamentSpec, tid: str) -> Iterable[GameRow]:
    """The games stored when a tournament is declared: a round-robin's whole schedule
    (a generator: 100,000 games are not held at once), a format's first games."""
    return (GameRow(g.id, tid, g.seq, list(g.players), g.deal_id)
            for g in plan_of(spec).first_games(tid))


@dataclass(frozen=True)
class Advanced:
    """What the format said after the games stored now."""

    #: Every stage is over: the tournament is finished.
    over: bool
    #: The games stored and not finished (scheduled or running), by seq.
    unfinished: list[GameRow]
    #: Every game stored (for the twins of duplicate deals).
    stored: list[GameRow]
    #: Bots the format may still give games to (held: never dismissed meanwhile).
    alive: tuple[str, ...]
    #: The final ranking, once over.
    ranking: tuple[str, ...] = ()
    #: What this call stored (games another process stored first left out), in words:
    #: "stage 1 (Swiss): round 2, 3 games".
    created: str = ""

    @property
    def scheduled(self) -> list[GameRow]:
        return [g for g in self.unfinished if g.status is GameStatus.SCHEDULED]


class Planner:
    """Asks tournament ``tid``'s format (declared as ``spec``) for its next games."""

    def __init__(self, store: Store, spec: TournamentSpec, tid: str) -> None:
        self.store = store
        self.spec = spec
        self.tid = tid

    def advance(self) -> Advanced:
        """Read every stored game, store the games the format asks for now, and say
        what is left (in a worker thread: it reads the store and pairs a Swiss round).
        StoreUnavailable: the database is out of reach (nothing stored, or some of the
        games: the next call stores the rest)."""
        stored = self.store.schedule(self.tid)
        created = ""
        step = plan_of(self.spec).next_games(self.tid, stored)
        if not isinstance(step, Next):
            return Advanced(True, [], stored, (), step.ranking)
        if isinstance(step.step, Create):
            new = rows_of(self.tid, step.step.games)
            added = self.store.add_games(self.tid, new)
            rounds = sorted({g.round for g in step.step.games})
            log.info("games_created", tournament=self.tid, stage=step.stage, rounds=rounds,
                     games=len(new), new=added)
            if added:
                title = self.spec.format.stages[step.stage].title
                created = (f"stage {step.stage + 1} ({title}): round"
                           f"{'s' if len(rounds) > 1 else ''} {', '.join(map(str, rounds))}, "
                           f"{added} new game{'s' if added > 1 else ''}")
            have = {g.id for g in stored}
            stored = sorted([*stored, *(g for g in new if g.id not in have)],
                            key=lambda g: g.seq)
        unfinished = [g for g in stored if g.status is not GameStatus.FINISHED]
        return Advanced(False, unfinished, stored, self.alive(stored), created=created)

    def alive(self, stored: Sequence[GameRow]) -> tuple[str, ...]:
        """The bots of the stage being played that may still be given games in it
        (held: never dismissed meanwhile)."""
        return plan_of(self.spec).alive(self.tid, stored_games(stored))
