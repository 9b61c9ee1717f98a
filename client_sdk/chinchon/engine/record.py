"""Game records: build, serialize (protobuf JSON mapping of ``chinchon.v1.GameRecord``)
and replay.

The engine writes and reads the JSON form directly, with the standard library only;
the tests check it against the generated protobuf classes, so any language reading
``protos/chinchon/v1/record.proto`` reads these files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYOFF_BEST,
    PASS,
    Action,
    Close,
    Deal,
    Discard,
    DrawDiscard,
    DrawStock,
    LayDown,
    LayOff,
    LayOffBest,
    Melds,
    Pass,
    Reshuffle,
)
from .cards import CARDS, Card, parse_card
from .errors import ChinchonError, IllegalAction, MalformedInput, RecordError, RuleSetError
from .game import (
    SHARED_ACTIONS,
    GameEnd,
    GameResult,
    GameState,
    HandResult,
    TableMeld,
    apply,
    hand_winner,
    new_game,
)
from .melds import End
from .rules import RuleSet
from .termination import Termination

FORMAT = "chinchon.v1.GameRecord"

ORIGINS = (
    "ACTION_ORIGIN_PLAYER",
    "ACTION_ORIGIN_DEFAULT_TIMEOUT",
    "ACTION_ORIGIN_DEFAULT_ILLEGAL",
)
TERMINATIONS = tuple(t.value for t in Termination)
_RULE_KEYS = {
    "players": "players",
    "deck": "deck",
    "jokers": "jokers",
    "figurePoints": "figure_points",
    "jokerPoints": "joker_points",
    "openDiscard": "open_discard",
    "retakeDiscard": "retake_discard",
    "closeMaxUnmatched": "close_max_unmatched",
    "closeMaxPoints": "close_max_points",
    "maxTurnsPerHand": "max_turns_per_hand",
    "scoreLimit": "score_limit",
}
_RULE_KEYS_BACK = {v: k for k, v in _RULE_KEYS.items()}


# -- rule sets ----------------------------------------------------------------------------


def rules_to_json(rules: RuleSet) -> dict[str, Any]:
    return {_RULE_KEYS_BACK[k]: v for k, v in rules.to_dict().items()}


def rules_from_json(d: dict[str, Any]) -> RuleSet:
    """A rule set from its JSON-mapping form (camelCase, or snake_case field names)."""
    if not isinstance(d, dict):
        raise RuleSetError("(rule set)", "must be an object of options")
    out = {}
    for k, v in d.items():
        name = _RULE_KEYS.get(k, k)
        out[name] = v
    return RuleSet.from_dict(out)


# -- actions ------------------------------------------------------------------------------


_CARD_BY_TEXT = {str(c): c for c in CARDS}  # canonical text -> card


def _cards(xs: Any, what: str) -> tuple[Card, ...]:
    if not isinstance(xs, list):
        raise MalformedInput(f"{what} must be a list of cards")
    try:  # records hold the canonical text of each card: one look-up each
        return tuple([_CARD_BY_TEXT[x] for x in xs])
    except (KeyError, TypeError):  # other spellings, or not a card: parse_card says which
        return tuple(parse_card(x) for x in xs)


def _melds_to_json(melds: Melds) -> dict[str, Any]:
    return {"melds": [{"cards": [str(c) for c in m]} for m in melds]}


def _melds_from_json(d: Any) -> Melds:
    if not isinstance(d, dict):
        raise MalformedInput("melds must be an object {'melds': [{'cards': [...]}, ...]}")
    return tuple(_cards(g.get("cards", []), "a meld") for g in d.get("melds", []))


_ACTION_JSON: dict[Action, dict[str, Any]] = {}


def action_to_json(a: Action) -> dict[str, Any]:
    """A player action as the JSON mapping of ``chinchon.v1.Action``."""
    if isinstance(a, DrawStock):
        return {"drawStock": {}}
    if isinstance(a, DrawDiscard):
        return {"drawDiscard": {}}
    if isinstance(a, Discard):
        return {"discard": {"card": str(a.card)}}
    if isinstance(a, Close):
        body: dict[str, Any] = {"card": str(a.card)}
        if a.melds is None:
            body["best"] = True
        else:
            body["melds"] = _melds_to_json(a.melds)
        return {"close": body}
    if isinstance(a, LayOff):
        lo: dict[str, Any] = {"card": str(a.card), "meld": a.meld}
        if a.at is not None:
            lo["end"] = "RUN_END_LOW" if a.at is End.LOW else "RUN_END_HIGH"
        return {"layOff": lo}
    if isinstance(a, LayOffBest):
        return {"layOffBest": {}}
    if isinstance(a, LayDown):
        if a.melds is None:
            return {"layDown": {"best": True}}
        return {"layDown": {"melds": _melds_to_json(a.melds)}}
    if isinstance(a, Pass):
        return {"pass": {}}
    raise TypeError(f"not a player action: {a!r}")


# The shared action objects of legal_actions (see game.SHARED_ACTIONS), by identity.
_SHARED_JSON: dict[int, dict[str, Any]] = {id(a): action_to_json(a) for a in SHARED_ACTIONS}


# Discards are most of the moves of a record: one shared action per canonical card text.
_DISCARD_BY_TEXT = {str(c): Discard(c) for c in CARDS}


def action_from_json(d: Any) -> Action:
    """Read the JSON mapping of ``chinchon.v1.Action``; raise :class:`MalformedInput`."""
    if not isinstance(d, dict) or len(d) != 1:
        raise MalformedInput("an action must have exactly one kind, e.g. {'discard': {...}}")
    ((kind, body),) = d.items()
    if not isinstance(body, dict):
        raise MalformedInput(f"action '{kind}' must be an object")
    if kind == "drawStock":
        return DRAW_STOCK
    if kind == "drawDiscard":
        return DRAW_DISCARD
    if kind == "discard":
        text = body.get("card", "")
        known = _DISCARD_BY_TEXT.get(text) if isinstance(text, str) else None
        return known if known is not None else Discard(parse_card(text))
    if kind == "close":
        card = parse_card(body.get("card", ""))
        if "melds" in body:
            return Close(card, _melds_from_json(body["melds"]))
        return Close(card, None)
    if kind == "layOff":
        end = body.get("end", "RUN_END_UNSPECIFIED")
        at = {"RUN_END_LOW": End.LOW, "RUN_END_HIGH": End.HIGH}.get(end)
        meld = body.get("meld", 0)
        if not isinstance(meld, int):
            raise MalformedInput("layOff.meld must be a meld index")
        return LayOff(parse_card(body.get("card", "")), meld, at)
    if kind == "layOffBest":
        return LAYOFF_BEST
    if kind == "layDown":
        if "melds" in body:
            return LayDown(_melds_from_json(body["melds"]))
        return LayDown(None)
    if kind == "pass":
        return PASS
    raise MalformedInput(f"unknown action kind '{kind}'")


# -- results -----------------------------------------------------------------------------


def _table_json(table: Sequence[TableMeld]) -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "owner": t.owner,
            "kind": "MELD_KIND_SET" if t.meld.kind.value == "set" else "MELD_KIND_RUN",
            "cards": [str(c) for c in t.meld.cards],
        }
        for i, t in enumerate(table)
    ]


def hand_result_to_json(hr: HandResult) -> dict[str, Any]:
    return {
        "handNumber": hr.hand_no,
        "end": "HAND_END_KIND_" + hr.end.name,
        "closer": hr.closer,
        "bonus": "BONUS_" + hr.bonus.upper(),
        "hands": [{"cards": [str(c) for c in h]} for h in hr.hands],
        "closeDiscard": str(hr.close_discard) if hr.close_discard is not None else "",
        "table": _table_json(hr.table),
        "unmatched": [{"cards": [str(c) for c in h]} for h in hr.unmatched],
        "points": list(hr.points),
        "totals": list(hr.totals),
        "eliminated": list(hr.eliminated),
    }


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
    def from_json(cls, d: dict[str, Any]) -> HandScore:
        closer = d.get("closer", -1)
        closer = -1 if closer is None else int(closer)
        points = tuple(int(p) for p in d.get("points", []))
        in_hand = tuple(s for s, h in enumerate(d.get("hands", [])) if h.get("cards"))
        return cls(closer, closer >= 0 and d.get("bonus") == "BONUS_CHINCHON", points,
                   in_hand, hand_winner(closer, points, in_hand))


def game_result_to_json(
    res: GameResult | None, termination: Termination, forfeited: int | None, summary: str,
    totals: Sequence[int], hands_played: int, winners: Sequence[int] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "end": ("GAME_END_KIND_" + res.end.name) if res else "GAME_END_KIND_UNSPECIFIED",
        "termination": termination.value,
        "winners": list(winners if winners is not None else (res.winners if res else ())),
        "totals": list(totals),
        "handsPlayed": hands_played,
        "summary": summary,
    }
    if forfeited is not None:
        out["forfeitedSeat"] = forfeited
    return out


def summarize(res: GameResult, names: Sequence[str]) -> str:
    w = ", ".join(names[s] for s in res.winners)
    if res.end is GameEnd.CHINCHON:
        return f"{w} made chinchón in hand {res.hands_played}"
    if res.end is GameEnd.LAST_PLAYER:
        return f"{w} won: everyone else reached the score limit ({res.hands_played} hands)"
    if res.end is GameEnd.LOWEST_TOTAL:
        return f"{w} won with the lowest total when the last players went out together"
    return f"draw between {w}: equal lowest totals"


# -- building ----------------------------------------------------------------------------


@dataclass
class RecordBuilder:
    """Collects a game as it is played; ``to_json`` gives the record document."""

    game_id: str
    rules: RuleSet
    names: Sequence[str]
    labels: dict[str, str] = field(default_factory=dict)
    actions: list[dict[str, Any]] = field(default_factory=list)

    def chance(self, a: Deal | Reshuffle) -> None:
        if isinstance(a, Deal):
            self.actions.append(
                {"deal": {"deck": [str(c) for c in a.deck], "starter": a.starter}}
            )
        else:
            self.actions.append({"reshuffle": {"order": [str(c) for c in a.order]}})

    def move(
        self, seat: int, a: Action, origin: str = "ACTION_ORIGIN_PLAYER",
        think_time: float | None = None,
    ) -> None:
        # Actions are values: their JSON is built once and shared by every record that
        # holds them (records are read, never edited in place).
        aj = _SHARED_JSON.get(id(a))  # the common actions, found without hashing
        if aj is None:
            aj = _ACTION_JSON.get(a)
        if aj is None:
            if len(_ACTION_JSON) > 65536:
                _ACTION_JSON.clear()
            aj = _ACTION_JSON[a] = action_to_json(a)
        mv: dict[str, Any] = {"seat": seat, "action": aj, "origin": origin}
        if think_time is not None:
            mv["thinkTime"] = f"{think_time:.6f}s"
        self.actions.append({"move": mv})

    def to_json(
        self, state: GameState, termination: Termination | None = None,
        forfeited: int | None = None, summary: str | None = None,
        forfeits: Sequence[int] | None = None,
    ) -> dict[str, Any]:
        """The record document. ``termination``: how the game ended, if not played to
        its end; ``forfeited``: the seat that forfeited (``forfeits``: all of them, when
        several did, as at a no-show; ``forfeited`` is then the first)."""
        res = state.result
        names = list(self.names)
        if termination is None:
            if res is None:
                raise ValueError("the game is not over: give a termination")
            termination = Termination.of_end(res.end)
        winners: list[int] | None = None
        if forfeits and forfeited is None:
            forfeited = forfeits[0]
        if forfeited is not None:
            winners = forfeit_winners(state, forfeits or [forfeited])
        if summary is None:
            summary = summarize(res, names) if res is not None else termination.value
        return {
            "format": FORMAT,
            "gameId": self.game_id,
            "rules": rules_to_json(self.rules),
            "seats": [{"seat": i, "name": n} for i, n in enumerate(names)],
            "actions": self.actions,
            "hands": [hand_result_to_json(h) for h in state.results],
            "result": game_result_to_json(
                res if forfeited is None else None,
                termination,
                forfeited,
                summary,
                state.scores,
                len(state.results),
                winners,
            ),
            "labels": dict(self.labels),
        }


# -- replaying ---------------------------------------------------------------------------


@dataclass
class Replay:
    """The outcome of replaying a record."""

    state: GameState
    names: list[str]
    record: dict[str, Any]
    actions: int


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: a record is a JSON object")
    return data


def replay(record: dict[str, Any], on_step: Callable[[GameState, int], None] | None = None) -> Replay:
    """Replay a record from scratch and check it against its recorded results.

    Raises :class:`RecordError` naming the first bad step (with the broken rule) or
    the first result that does not match the replay.
    """
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f"not a game record: 'format' must be '{FORMAT}'")
    try:
        rules = rules_from_json(record.get("rules", {}))
    except RuleSetError as e:
        raise RecordError(f"bad rule set: {e}") from None
    seats = record.get("seats", [])
    if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats):
        raise RecordError("'seats' must be a list of objects {'seat': n, 'name': text}")
    names = [str(s.get("name", f"seat {i}")) for i, s in enumerate(seats)]
    if len(names) != rules.players:
        raise RecordError(f"{len(names)} seats for a rule set of {rules.players} players")
    state = new_game(rules)
    actions = record.get("actions", [])
    if not isinstance(actions, list):
        raise RecordError("'actions' must be a list")
    for i, step in enumerate(actions):
        try:
            state = _replay_step(state, step)
        except IllegalAction as e:
            raise RecordError(f"action {i + 1} ({_step_text(step)}): {e.message} [{e.code.value}]") from None
        except (MalformedInput, ChinchonError) as e:
            raise RecordError(f"action {i + 1}: {e}") from None
        except (TypeError, AttributeError, KeyError, ValueError) as e:
            raise RecordError(f"action {i + 1}: malformed step ({type(e).__name__}: {e})") from None
        if on_step is not None:
            on_step(state, i)
    got = [hand_result_to_json(h) for h in state.results]
    want = record.get("hands", [])
    if not isinstance(want, list) or not all(isinstance(w, dict) for w in want):
        raise RecordError("'hands' must be a list of hand result objects")
    for k, (g, w) in enumerate(zip(got, want, strict=False)):
        for key in ("points", "totals", "closer", "end", "bonus"):
            if w.get(key, _zero(g[key])) != g[key]:
                raise RecordError(
                    f"hand {k + 1}: recorded {key} {w.get(key)} but the replay gives {g[key]}"
                )
    if len(want) != len(got):
        raise RecordError(f"the record lists {len(want)} hand results, the replay plays {len(got)}")
    result = record.get("result", {})
    if not isinstance(result, dict):
        raise RecordError("'result' must be an object")
    name = result.get("termination", "TERMINATION_UNSPECIFIED")
    term = Termination.parse(name)
    if term is not None and term.played:
        if state.result is None:
            raise RecordError("the record says the game ended normally, but the replay is not over")
        if sorted(result.get("winners", [])) != sorted(state.result.winners):
            raise RecordError(
                f"recorded winners {result.get('winners')} but the replay gives "
                f"{list(state.result.winners)}"
            )
    elif term is None:
        raise RecordError(f"unknown termination '{name}'")
    return Replay(state, names, record, len(actions))


def _zero(v: Any) -> Any:
    return 0 if isinstance(v, int) else "" if isinstance(v, str) else []


def _step_text(step: Any) -> str:
    try:
        if "move" in step:
            return f"seat {step['move'].get('seat', 0)}: {action_from_json(step['move']['action'])}"
        return str(next(iter(step)))
    except Exception:  # only for the message
        return "unreadable"


def _replay_step(state: GameState, step: Any) -> GameState:
    if not isinstance(step, dict) or len(step) != 1:
        raise MalformedInput("each action must have exactly one of deal, reshuffle, move")
    ((kind, body),) = step.items()
    if kind == "move":
        seat = body.get("seat", 0)
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise MalformedInput("move.seat must be a number")
        return apply(state, action_from_json(body.get("action")), seat=seat)
    if kind == "deal":
        return apply(state, Deal(_cards(body.get("deck"), "deal.deck"), int(body.get("starter", 0))))
    if kind == "reshuffle":
        return apply(state, Reshuffle(_cards(body.get("order"), "reshuffle.order")))
    raise MalformedInput(f"unknown step '{kind}'")


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=1, ensure_ascii=False)


__all__ = [
    "FORMAT",
    "HandScore",
    "RecordBuilder",
    "Replay",
    "action_from_json",
    "action_to_json",
    "dumps",
    "forfeit_winners",
    "hand_result_to_json",
    "load",
    "replay",
    "rules_from_json",
    "rules_to_json",
]

