"""Playing a format out without a referee: ``next_games`` asked again and again, its
games stored in a dict (as the store would, by seq) and finished with results chosen by
the test. The formats are pure functions of the stored games, so this is the whole of
what they do; the director (phase 2) adds the playing of each game."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from chinchon.engine import HandScore, Outcome, Termination
from chinchon_referee.storage import GameRow
from chinchon_referee.tournament.formats.games import Create, NewGame
from chinchon_referee.tournament.formats.plan import Next, Over, Step, next_games
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.vocabulary import GameStatus

#: A game's result from its row: the winning seats (several: a shared win), or None
#: for an ABORTED game.
Oracle = Callable[[GameRow], "tuple[int, ...] | None"]


def spec_of(bots: int | Sequence[str], fmt: Any = None, **top: Any) -> TournamentSpec:
    names = [f"b{i:02d}" for i in range(bots)] if isinstance(bots, int) else list(bots)
    decl: dict[str, Any] = {"name": "cup", "seed": "formats", "participants": names, **top}
    if fmt is not None:
        decl["format"] = fmt
    return TournamentSpec.from_dict(decl)


def row_of(g: NewGame, tid: str = "t") -> GameRow:
    return GameRow(g.id, tid, g.seq, list(g.players), g.deal_id)


def finish(row: GameRow, winners: tuple[int, ...] | None) -> None:
    """Finish ``row`` with ``winners`` (None: aborted by the referee)."""
    n = len(row.players)
    row.status = GameStatus.FINISHED
    if winners is None:
        row.result = Outcome(Termination.ABORTED, None, (), (0,) * n, 0, "aborted")
        row.hands = []
        return
    row.result = Outcome(Termination.NORMAL, None, winners, tuple(0 if s in winners else 50
                                                                   for s in range(n)), 1, "")
    row.hands = [HandScore.of(winners[0], False, [0 if s in winners else 10 for s in range(n)],
                              list(range(n)))]


def coin(seed: str = "coin") -> Oracle:
    """Each seat as likely to win, from the game's deal: the same game, the same result."""
    def oracle(row: GameRow) -> tuple[int, ...]:
        h = hashlib.sha256(f"{seed}/{row.deal_id}/{row.players}".encode()).digest()
        return (h[0] % len(row.players),)
    return oracle


def elo(strength: dict[str, float], rng: random.Random) -> Oracle:
    """Two seats: the first wins with the Elo probability of the strengths."""
    def oracle(row: GameRow) -> tuple[int, ...]:
        a, b = row.players[0], row.players[1]
        p = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 400))
        return (0,) if rng.random() < p else (1,)
    return oracle


class Played:
    """A tournament played out by ``next_games``."""

    def __init__(self, spec: TournamentSpec, tid: str = "t") -> None:
        self.spec = spec.with_seed()
        self.tid = tid
        self.rows: dict[int, GameRow] = {}
        self.creations: list[tuple[NewGame, ...]] = []
        self.over: Over | None = None

    def step(self) -> Step:
        return next_games(self.spec, self.tid, list(self.rows.values()))

    def store(self, games: Sequence[NewGame]) -> None:
        for g in games:
            assert g.seq not in self.rows, f"{g.id} created twice"
            self.rows[g.seq] = row_of(g, self.tid)

    def pending(self) -> list[GameRow]:
        return [r for r in self.rows.values() if r.status is not GameStatus.FINISHED]

    def run(self, oracle: Oracle, rng: random.Random | None = None, most: int = 100_000) -> Over:
        """Until it is over: store what is asked, finish a pending game (a random one, or
        the first), ask again."""
        for _ in range(most):
            st = self.step()
            if isinstance(st, Over):
                self.over = st
                return st
            assert isinstance(st, Next)
            if isinstance(st.step, Create):
                assert st.step.games, "an empty creation"
                self.creations.append(st.step.games)
                self.store(st.step.games)
                continue
            pend = self.pending()
            assert pend, f"waiting on nothing: {st}"
            assert set(st.step.on) == {r.id for r in pend}
            r = pend[rng.randrange(len(pend))] if rng else min(pend, key=lambda r: r.seq)
            finish(r, oracle(r))
        raise AssertionError("the tournament did not end")

    def stage_games(self, stage: int) -> list[GameRow]:
        return [r for r in sorted(self.rows.values(), key=lambda r: r.seq)
                if r.deal_id.startswith(f"{self.tid}/stage{stage}/")]


def log2(n: int) -> int:
    return math.ceil(math.log2(n))
