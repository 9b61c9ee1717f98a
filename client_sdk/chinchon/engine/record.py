"""Game records: build, serialize (protobuf JSON mapping of ``chinchon.v1.GameRecord``)
and replay.

The engine writes and reads the JSON form directly, with the standard library only;
the tests check it against the generated protobuf classes, so any language reading
``protos/chinchon/v1/record.proto`` reads these files.
"""

from __future__ import annotations

import enum
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
    GameState,
    HandResult,
    TableMeld,
    apply,
    new_game,
)
from .melds import End
from .outcome import Outcome
from .rules import RuleSet
from .termination import Termination

FORMAT = "chinchon.v1.GameRecord"



class ActionOrigin(enum.StrEnum):
    """Who chose a recorded move. Each value is the name of the same value of the
    protocol's ``chinchon.v1.ActionOrigin`` (records write these names)."""

    #: The seat's player (a bot's answer, or a house bot's choice).
    PLAYER = "ACTION_ORIGIN_PLAYER"
    #: The referee, for a player that did not answer in time.
    DEFAULT_TIMEOUT = "ACTION_ORIGIN_DEFAULT_TIMEOUT"
    #: The referee, for a player whose answers were refused until no retry was left.
    DEFAULT_ILLEGAL = "ACTION_ORIGIN_DEFAULT_ILLEGAL"


class SeatIncidentKind(enum.StrEnum):
    """What a record's ``SeatIncident`` says happened (the names of
    ``chinchon.v1.SeatIncidentKind``)."""

    #: The answer could not be read as an action.
    MALFORMED = "SEAT_INCIDENT_KIND_MALFORMED"
    #: The answer was an illegal action.
    ILLEGAL = "SEAT_INCIDENT_KIND_ILLEGAL"
    #: No answer in time.
    TIMEOUT = "SEAT_INCIDENT_KIND_TIMEOUT"
    #: The referee played the default action: a strike.
    DEFAULT = "SEAT_INCIDENT_KIND_DEFAULT"


ORIGINS = tuple(o.value for o in ActionOrigin)
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
    "wildCards": "wild_cards",
    "jokersPerMeld": "jokers_per_meld",
    "closeFirstRound": "close_first_round",
}
_RULE_KEYS_BACK = {v: k for k, v in _RULE_KEYS.items()}


# -- rule sets ----------------------------------------------------------------------------


def rules_to_json(rules: RuleSet) -> dict[str, Any]:
    """The rule set as the record writes it: the house rules only where they differ
    from their defaults (``RuleSet.to_dict(compact=True)``)."""
    return {_RULE_KEYS_BACK[k]: v for k, v in rules.to_dict(compact=True).items()}


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


# -- building ----------------------------------------------------------------------------


@dataclass
class RecordBuilder:
    """Collects a game as it is played; ``to_json`` gives the record document."""

    game_id: str
    rules: RuleSet
    names: Sequence[str]
    labels: dict[str, str] = field(default_factory=dict)
    actions: list[dict[str, Any]] = field(default_factory=list)
    #: See :meth:`incident` (``GameRecord.incidents``).
    incidents: list[dict[str, Any]] = field(default_factory=list)

    def chance(self, a: Deal | Reshuffle) -> None:
        if isinstance(a, Deal):
            self.actions.append(
                {"deal": {"deck": [str(c) for c in a.deck], "starter": a.starter}}
            )
        else:
            self.actions.append({"reshuffle": {"order": [str(c) for c in a.order]}})

    def move(
        self, seat: int, a: Action, origin: ActionOrigin = ActionOrigin.PLAYER,
        think_time: float | None = None, resolved: Sequence[Action] | None = None,
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
        mv: dict[str, Any] = {"seat": seat, "action": aj, "origin": origin.value}
        if think_time is not None:
            mv["thinkTime"] = f"{think_time:.6f}s"
        if resolved is not None:  # a macro's concrete actions (macros.resolve)
            mv["resolved"] = [action_to_json(r) for r in resolved]
        self.actions.append({"move": mv})

    def incident(self, seat: int, kind: SeatIncidentKind, **fields: Any) -> None:
        """A refused answer, timeout or default of ``seat`` on the way to the next
        step (``chinchon.v1.SeatIncident``; ``fields`` in its JSON names: ``requestId``,
        ``attempt``, ``sent``, ``violation``, ``message``, ``strikes``, ``maxStrikes``,
        ``waited`` in seconds). The caller bounds the texts."""
        note: dict[str, Any] = {"step": len(self.actions), "seat": seat, "kind": kind.value}
        for k, v in fields.items():
            if k == "waited":
                note[k] = f"{float(v):.6f}s"
            elif k == "requestId":
                note[k] = str(v)  # a uint64, written as text by the JSON mapping
            elif v not in ("", None):
                note[k] = v
        self.incidents.append(note)

    def to_json(
        self, state: GameState, termination: Termination | None = None,
        forfeited: int | None = None, summary: str | None = None,
        forfeits: Sequence[int] | None = None,
    ) -> dict[str, Any]:
        """The record document. ``termination``: how the game ended, if not played to
        its end; ``forfeited``: the seat that forfeited (``forfeits``: all of them, when
        several did, as at a no-show)."""
        if not forfeits and forfeited is not None:
            forfeits = [forfeited]
        outcome = Outcome.of(state, self.names, termination, forfeits or (), summary)
        return self.document(state, outcome)

    def document(self, state: GameState, outcome: Outcome,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The record document of the game played to ``state``, which ended as
        ``outcome``; ``extra``: more top-level fields (the referee's time control and
        policies)."""
        doc: dict[str, Any] = {
            "format": FORMAT,
            "gameId": self.game_id,
            "rules": rules_to_json(self.rules),
            "seats": [{"seat": i, "name": n} for i, n in enumerate(self.names)],
            "actions": self.actions,
            "hands": [hand_result_to_json(h) for h in state.results],
            "result": outcome.to_json(),
            "labels": dict(self.labels),
        }
        if self.incidents:
            doc["incidents"] = self.incidents
        if extra:
            doc.update(extra)
        return doc


# -- replaying ---------------------------------------------------------------------------


@dataclass
class Replay:
    """The outcome of replaying a record."""

    state: GameState
    names: list[str]
    record: dict[str, Any]
    actions: int
    #: The record's result, as types.
    outcome: Outcome


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
    outcome = Outcome.from_json(record.get("result", {}))
    if outcome.termination.played:
        if state.result is None:
            raise RecordError("the record says the game ended normally, but the replay is not over")
        if sorted(outcome.winners) != sorted(state.result.winners):
            raise RecordError(
                f"recorded winners {list(outcome.winners)} but the replay gives "
                f"{list(state.result.winners)}"
            )
    return Replay(state, names, record, len(actions), outcome)


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
    "SeatIncidentKind",
    "Outcome",
    "RecordBuilder",
    "Replay",
    "action_from_json",
    "action_to_json",
    "dumps",
    "hand_result_to_json",
    "replay",
    "rules_from_json",
    "rules_to_json",
]

