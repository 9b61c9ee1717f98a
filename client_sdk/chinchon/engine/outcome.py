"""How a game came out, as types: :class:`Outcome` (a record's ``result``) and
:class:`HandScore` (what a hand result says about each seat's score).

A record document (``record.py``) holds both as the JSON mapping of ``chinchon.v1``;
these types read and write that mapping in one place, so that the referee, the
standings and the exports pass types around and never look into a document by key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import RecordError
from .game import GameEnd, GameResult, GameState, hand_winner
from .termination import Termination

_END_PREFIX = "GAME_END_KIND_"


def forfeit_winners(state: GameState, forfeits: Sequence[int]) -> list[int]:
    """The winners of a game that the seats ``forfeits`` forfeit in ``state``: the
    other seats still in the game (or, if none is, all the others), and among several
    the lowest total. The one rule for every forfeit, a no-show's included."""
    others = [s for s in range(state.n) if s not in forfeits]
    winners = [s for s in others if state.alive[s]] or others
    if len(winners) > 1:  # several remain: the lowest total among them wins
        low = min(state.scores[s] for s in winners)
        winners = [s for s in winners if state.scores[s] == low]
    return winners


def summarize(res: GameResult, names: Sequence[str]) -> str:
    """One plain sentence for a game played to its end."""
    w = ", ".join(names[s] for s in res.winners)
    if res.end is GameEnd.CHINCHON:
        return f"{w} made chinchón in hand {res.hands_played}"
    if res.end is GameEnd.LAST_PLAYER:
        return f"{w} won: everyone else reached the score limit ({res.hands_played} hands)"
    if res.end is GameEnd.LOWEST_TOTAL:
        return f"{w} won with the lowest total when the last players went out together"
    if res.end is GameEnd.LENGTH_LIMIT:
        how = "won with" if len(res.winners) == 1 else "share a draw with equal"
        return (f"{w} {how} the lowest total when the game reached its length limit "
                f"({res.hands_played} hands)")
    return f"draw between {w}: equal lowest totals"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the ``result`` of its record (``chinchon.v1.GameResult``)."""

    termination: Termination
    #: How the game was won when it was played to its end; None otherwise.
    end: GameEnd | None
    #: Seats; several only for a draw.
    winners: tuple[int, ...]
    totals: tuple[int, ...]
    hands_played: int
    #: One sentence for people.
    summary: str
    #: The seat that forfeited (the first, when several did), if one did.
    forfeited: int | None = None

    @classmethod
    def of(
        cls, state: GameState, names: Sequence[str], termination: Termination | None = None,
        forfeits: Sequence[int] = (), summary: str | None = None,
    ) -> Outcome:
        """The outcome of ``state``: played to its end (no ``termination``), or ended
        early by ``termination``, with the seats ``forfeits`` forfeiting (the engine's
        one forfeit rule names the winners)."""
        res = state.result
        if termination is None:
            if res is None:
                raise ValueError("the game is not over: give a termination")
            termination = Termination.of_end(res.end)
        totals, hands = tuple(state.scores), len(state.results)
        if forfeits:
            winners = tuple(forfeit_winners(state, forfeits))
            return cls(termination, None, winners, totals, hands,
                       summary if summary is not None else termination.value, forfeits[0])
        if summary is None:
            summary = summarize(res, names) if res is not None else termination.value
        if res is None:
            return cls(termination, None, (), totals, hands, summary)
        return cls(termination, res.end, tuple(res.winners), totals, hands, summary)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "end": _END_PREFIX + (self.end.name if self.end is not None else "UNSPECIFIED"),
            "termination": self.termination.value,
            "winners": list(self.winners),
            "totals": list(self.totals),
            "handsPlayed": self.hands_played,
            "summary": self.summary,
        }
        if self.forfeited is not None:
            out["forfeitedSeat"] = self.forfeited
        return out

    @classmethod
    def from_json(cls, d: Any) -> Outcome:
        """Read a record's ``result``; :class:`RecordError` says what is wrong with it."""
        if not isinstance(d, dict):
            raise RecordError("'result' must be an object")
        term = Termination.parse(d.get("termination"))
        if term is None:
            raise RecordError(f"unknown termination '{d.get('termination')}'")
        end_name = str(d.get("end", _END_PREFIX + "UNSPECIFIED")).removeprefix(_END_PREFIX)
        end = GameEnd.__members__.get(end_name)
        try:
            forfeited = d.get("forfeitedSeat")
            return cls(
                termination=term,
                end=end,
                winners=tuple(int(w) for w in d.get("winners", [])),
                totals=tuple(int(t) for t in d.get("totals", [])),
                hands_played=int(d.get("handsPlayed", 0)),
                summary=str(d.get("summary", "")),
                forfeited=None if forfeited is None else int(forfeited),
            )
        except (TypeError, ValueError) as e:
            raise RecordError(f"'result' is malformed: {e}") from None


@dataclass(frozen=True, slots=True)
class HandScore:
    """What a hand result of a record says about each seat's score: read once from the
    record's JSON (cards and table are not parsed), with the hand's winner decided by
    the engine's rule (:func:`~.game.hand_winner`)."""

    #: The seat that closed the hand, or -1.
    closer: int
    #: The closer made chinchón.
    chinchon: bool
    points: tuple[int, ...]
    #: The seats still in the hand when it ended.
    in_hand: tuple[int, ...]
    winner: int | None

    @classmethod
    def of(cls, closer: int, chinchon: bool, points: Sequence[int],
           in_hand: Sequence[int]) -> HandScore:
        points, in_hand = tuple(points), tuple(in_hand)
        return cls(closer, chinchon, points, in_hand, hand_winner(closer, points, in_hand))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HandScore:
        """From a hand result of a record document."""
        closer = d.get("closer", -1)
        closer = -1 if closer is None else int(closer)
        points = tuple(int(p) for p in d.get("points", []))
        in_hand = tuple(s for s, h in enumerate(d.get("hands", [])) if h.get("cards"))
        return cls.of(closer, closer >= 0 and d.get("bonus") == "BONUS_CHINCHON", points,
                      in_hand)


__all__ = ["HandScore", "Outcome", "forfeit_winners", "summarize"]
