"""What the formats read of the stored games, and the games they ask for.

A stage's planner (:mod:`.stage_rr`, :mod:`.stage_swiss`, :mod:`.stage_bracket`) gets a
:class:`StageRun`, the stage's place and bots and its stored games, and answers with a
:class:`StageStep`: games to create, games to wait for, or the stage's final ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chinchon.engine import Termination

from ...storage import GameRow
from ...vocabulary import GameStatus
from ..standings import GameSummary, summarize_game
from .layout import StageLayout
from .spec import Context, Stage


@dataclass(frozen=True)
class StoredGame:
    seq: int
    id: str
    players: tuple[str, ...]
    finished: bool
    #: Finished: the seats that won (one, or several sharing the win).
    winners: tuple[int, ...] = ()
    #: Finished, but stopped by an internal error of the referee: it does not count.
    aborted: bool = False
    #: Finished: what the standings count.
    summary: GameSummary | None = None

    @classmethod
    def of(cls, row: GameRow) -> StoredGame:
        res = row.result
        if row.status is not GameStatus.FINISHED or res is None:
            return cls(row.seq, row.id, tuple(row.players), False)
        return cls(row.seq, row.id, tuple(row.players), True, tuple(res.winners),
                   res.termination is Termination.ABORTED,
                   summarize_game(row.players, res, row.hands or [], row.stats, row.deal_id))

    @property
    def winner(self) -> str | None:
        """The bot that won alone (None: a shared win, or none)."""
        return self.players[self.winners[0]] if len(self.winners) == 1 else None


@dataclass(frozen=True)
class NewGame:
    """A game to create: store it (once: its id is its key) as scheduled."""

    seq: int
    id: str
    players: tuple[str, ...]
    deal_id: str
    #: Its stage (from 0), and its round in the stage (from 1; a bracket's: of its section).
    stage: int
    round: int


@dataclass(frozen=True)
class Create:
    games: tuple[NewGame, ...]


@dataclass(frozen=True)
class Wait:
    #: Its games that are not finished yet.
    on: tuple[str, ...]
    #: Bots that may still be given games in this stage (a bracket's not yet out).
    alive: tuple[str, ...]


@dataclass(frozen=True)
class Done:
    #: The stage's final ranking, best first.
    ranking: tuple[str, ...]


StageStep = Create | Wait | Done


@dataclass(frozen=True)
class StageRun:
    """One stage as its planner sees it."""

    tid: str
    seed: str
    ctx: Context
    layout: StageLayout
    #: Its bots in seed order (seed 1 first).
    bots: tuple[str, ...]
    #: Its stored games, by seq.
    games: tuple[StoredGame, ...]

    @property
    def stage(self) -> Stage:
        return self.layout.stage

    @property
    def index(self) -> int:
        return self.layout.index

    @property
    def seeds(self) -> dict[str, int]:
        """Each bot's seed (1 first)."""
        return {b: i + 1 for i, b in enumerate(self.bots)}

    def local(self, game: StoredGame) -> int:
        return game.seq - self.layout.base

    def new(self, local: int, players: Sequence[str], deal: str, rnd: int) -> NewGame:
        """The game at ``local`` in the stage's span."""
        if not 0 <= local < self.layout.span:
            raise ValueError(f"stage {self.index}: game {local} is outside its span")
        seq = self.layout.base + local
        return NewGame(seq, game_id(self.tid, seq), tuple(players),
                       f"{self.tid}/stage{self.index}/{deal}", self.index, rnd)

    def summaries(self) -> list[GameSummary]:
        return [g.summary for g in self.games if g.summary is not None]

    def waiting(self, alive: Sequence[str] | None = None) -> Wait:
        return Wait(tuple(g.id for g in self.games if not g.finished),
                    tuple(self.bots if alive is None else alive))


def game_id(tid: str, seq: int) -> str:
    """A game's id: the tournament's and its seq (as every tournament's games always had)."""
    return f"{tid}-g{seq:05d}"


def missing(expected: Sequence[NewGame], games: Sequence[StoredGame]) -> list[NewGame]:
    """The expected games not stored yet."""
    have = {g.seq for g in games}
    return [g for g in expected if g.seq not in have]
