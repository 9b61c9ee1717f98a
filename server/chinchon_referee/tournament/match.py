"""A head-to-head match as a tournament of its own shape: its schedule of duplicate
pairs, and its tally of pairs by opponent (``chinchon match``, docs/match.md).

The schedule: for pair k = 1..N and each opponent in turn, one deal played twice, the
candidate in seat 0 then in seat 1 (game ids ``<tid>-<opponent>-p<k>a`` and ``...b``).
The two games of a deal are twins (the director keeps them apart in time and shows each
under its own suit relabelling, docs/duplicate-deals.md), and they come one after the
other in the schedule, so a pair is complete a game or two after it began: a test that
stops early wastes at most the games in flight.

A game scores the candidate 1 (it alone won), 0.5 (a draw: both seats among the
winners) or 0 (its opponent won, forfeits included); a pair is the sum of its two games
in quarters, 0..4 (:class:`~.elo.Pentanomial`). Forfeits and draws are counted apart
too, by who forfeited.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from chinchon.engine import Outcome

from ..storage import GameRow
from .elo import Pentanomial

#: The candidate's name in a match's tournament.
CANDIDATE = "candidate"


def match_schedule(tid: str, opponents: Sequence[str], pairs: int) -> Iterator[GameRow]:
    """The games of a match of ``pairs`` pairs against each of ``opponents``."""
    seq = 0
    for k in range(1, pairs + 1):
        for opp in opponents:
            deal = f"{opp}-d{k}"
            for side, players in (("a", [CANDIDATE, opp]), ("b", [opp, CANDIDATE])):
                seq += 1
                yield GameRow(f"{tid}-{opp}-p{k}{side}", tid, seq, players, deal)


@dataclass(frozen=True)
class GameScore:
    """One finished game of a match, from the candidate's side."""

    opponent: str
    deal: str
    #: The candidate's score in halves: 2 won, 1 drawn, 0 lost.
    halves: int
    #: Who forfeited it ("" if nobody did).
    forfeited_by: str = ""

    @classmethod
    def of(cls, players: Sequence[str], deal: str, result: Outcome) -> GameScore:
        cand = list(players).index(CANDIDATE)
        opponent = players[1 - cand]
        winners = set(result.winners)
        halves = 1 if len(winners) > 1 else 2 if winners == {cand} else 0
        by = "" if result.forfeited is None else players[result.forfeited]
        return cls(opponent, deal, halves, by)


@dataclass
class Side:
    """The tally against one opponent."""

    pentanomial: Pentanomial = field(default_factory=Pentanomial)
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    #: Games forfeited by the candidate, and by the opponent.
    forfeits_candidate: int = 0
    forfeits_opponent: int = 0
    #: Deal -> the candidate's halves in the first game of a pair still open.
    open_pairs: dict[str, int] = field(default_factory=dict)

    def add(self, game: GameScore) -> None:
        self.games += 1
        self.wins += game.halves == 2
        self.draws += game.halves == 1
        self.losses += game.halves == 0
        if game.forfeited_by == CANDIDATE:
            self.forfeits_candidate += 1
        elif game.forfeited_by:
            self.forfeits_opponent += 1
        first = self.open_pairs.pop(game.deal, None)
        if first is None:
            self.open_pairs[game.deal] = game.halves
        else:
            self.pentanomial = self.pentanomial.add(first + game.halves)

    def to_dict(self) -> dict[str, object]:
        return {"pairs": self.pentanomial.pairs, "pentanomial": list(self.pentanomial.counts),
                "games": self.games, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "forfeits_by_candidate": self.forfeits_candidate,
                "forfeits_by_opponent": self.forfeits_opponent,
                "unpaired_games": len(self.open_pairs)}


@dataclass
class Tally:
    """A match's finished games, by opponent; each game counted once."""

    opponents: tuple[str, ...]
    sides: dict[str, Side] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for o in self.opponents:
            self.sides.setdefault(o, Side())

    def add(self, game_id: str, players: Sequence[str], deal: str, result: Outcome) -> bool:
        """Count a finished game (once: False if it was counted already)."""
        if game_id in self.seen:
            return False
        self.seen.add(game_id)
        score = GameScore.of(players, deal, result)
        self.sides[score.opponent].add(score)
        return True

    def add_row(self, row: GameRow) -> bool:
        if row.result is None:
            return False
        return self.add(row.id, row.players, row.deal_id, row.result)

    @property
    def total(self) -> Side:
        """Every opponent's pairs together (the gauntlet's pooled tally)."""
        out = Side()
        for s in self.sides.values():
            out.pentanomial = Pentanomial.of([a + b for a, b in zip(
                out.pentanomial.counts, s.pentanomial.counts, strict=True)])
            out.games += s.games
            out.wins += s.wins
            out.draws += s.draws
            out.losses += s.losses
            out.forfeits_candidate += s.forfeits_candidate
            out.forfeits_opponent += s.forfeits_opponent
            out.open_pairs.update({f"{id(s)}:{k}": v for k, v in s.open_pairs.items()})
        return out
