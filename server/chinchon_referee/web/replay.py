"""A finished game, step by step, for the replay viewer.

The record is replayed by the engine (``chinchon.engine.record.replay``, which checks
it); each step's table is either every card (``view="all"``) or what one seat saw then
(``view=N``: the engine's own ``observation``). In a seat's view, the moves of the
others are described as that seat saw them: a deal or a reshuffle without its cards, a
close without its face-down discard. Each decision's clock use is given with the bank
left after it; a macro (``layoff best``, ``laydown best``, ``close … best``) with the
concrete actions it stood for; each refused answer, timeout and default (the record's
``incidents``) at the step it came before; each hand seen, its melds apart from its
unmatched cards; and where each hand starts (``hand_starts``), for the seek bar."""

from __future__ import annotations

from typing import Any

from chinchon.engine import GameState, RecordError, new_game
from chinchon.engine.actions import Close
from chinchon.engine.macros import is_macro, resolve
from chinchon.engine.record import action_from_json, replay
from chinchon.engine.solver import solver_for
from chinchon.engine.steps import incident_step, step_of_index

from .table import full_view, seat_view

#: Steps a record may have to be shown (a record is checked by the engine first; this
#: bounds what one request may cost).
MAX_STEPS = 20_000


class ViewError(ValueError):
    """The view asked for does not exist for this game."""


def parse_view(text: str, seats: int) -> int | None:
    """``all`` -> None; a seat number -> that seat; ViewError otherwise."""
    if text in ("", "all"):
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 3 or not 0 <= int(text) < seats:
        raise ViewError(f"view: 'all' or a seat number 0..{seats - 1}")
    return int(text)


def _seconds(text: Any) -> float | None:
    if isinstance(text, str) and text.endswith("s"):
        try:
            return float(text[:-1])
        except ValueError:
            return None
    return None


def _describe(step: dict[str, Any], view: int | None) -> dict[str, Any]:
    ((kind, body),) = step.items()
    if kind == "deal":
        return {"kind": "deal", "seat": int(body.get("starter", 0)),
                "text": "deal" if view is not None else f"deal (starter seat {body.get('starter', 0)})"}
    if kind == "reshuffle":
        return {"kind": "reshuffle", "seat": -1, "text": "the discard pile is shuffled into a new stock"}
    seat = int(body.get("seat", 0))
    action = action_from_json(body.get("action"))
    akind = next(iter(body.get("action", {})), "")
    text = str(action)
    if view is not None and view != seat and akind == "close":
        text = "close (the closing discard lies face down)"
    return {"kind": akind, "seat": seat, "text": text, "origin": body.get("origin", ""),
            "think": _seconds(body.get("thinkTime"))}


def _melds_text(melds: Any) -> str:
    return " | ".join(" ".join(str(c) for c in m) for m in melds) or "no meld"


def _resolved_text(prev: GameState, state: GameState, step: dict[str, Any],
                   view: int | None) -> str | None:
    """What a macro did, in words (None for another action): the record's ``resolved``
    when it has one, else read from the states (records older than the field)."""
    body = step.get("move")
    if body is None:
        return None
    action = action_from_json(body.get("action"))
    if not is_macro(action):
        return None
    seat = int(body.get("seat", 0))
    written = body.get("resolved")
    done = ([action_from_json(a) for a in written] if isinstance(written, list)
            else resolve(prev, state, seat, action) or ())
    if isinstance(action, Close):
        melds = done[0].melds if done and isinstance(done[0], Close) else ()
        return f"melds: {_melds_text(melds or ())}"
    if not done:
        return "nothing to lay off"
    return "; ".join(str(a) for a in done)


def _arrange(table: dict[str, Any], state: GameState, seen: dict[int, dict[str, Any]]) -> None:
    """Each hand shown in ``table``, split into the melds the solver finds and the
    unmatched cards (``arranged``), so the viewer draws them apart. ``seen``: the splits
    of the hands met so far (a hand changes only when its seat acts)."""
    solver = solver_for(state.rules)
    for s in table["seats"]:
        if s.get("hand"):
            mask = state.hands[s["seat"]]
            split = seen.get(mask)
            if split is None:
                arr = solver.best_arrangement(mask)
                split = seen[mask] = {"melds": [[str(c) for c in m.cards] for m in arr.melds],
                                      "unmatched": [str(c) for c in arr.unmatched]}
            s["arranged"] = split


def _incidents_by_step(record: dict[str, Any], view: int | None) -> dict[int, list[dict[str, Any]]]:
    """The record's incidents by the step they belong to (:func:`incident_step`). In a
    seat's view, the others' answers are left out (they may name the cards they held)."""
    out: dict[int, list[dict[str, Any]]] = {}
    notes = record.get("incidents", [])
    for note in notes if isinstance(notes, list) else []:
        if not isinstance(note, dict) or not isinstance(note.get("step", 0), int):
            continue
        shown = dict(note)
        if view is not None and int(note.get("seat", 0)) != view:
            shown.pop("sent", None)
            shown.pop("message", None)
        out.setdefault(incident_step(note), []).append(shown)
    return out


def steps(record: dict[str, Any], view: int | None) -> dict[str, Any]:
    """The replay of ``record`` as the viewer shows it from ``view`` (None: all cards).

    Raises RecordError for a record the engine refuses."""
    actions = record.get("actions", [])
    if not isinstance(actions, list) or len(actions) > MAX_STEPS:
        raise RecordError(f"a record of at most {MAX_STEPS} steps can be viewed")
    states: list[GameState] = []
    rp = replay(record, lambda st, i: states.append(st))
    names = rp.names
    n = len(names)
    if view is not None and not 0 <= view < n:
        raise ViewError(f"view: 'all' or a seat number 0..{n - 1}")
    tc = record.get("timeControl", {})
    per_move = _seconds(tc.get("perMove")) or 0.0
    bank0 = _seconds(tc.get("bank"))
    banks = [bank0] * n
    out_steps: list[dict[str, Any]] = []
    hands_before = 0
    prev: GameState | None = None
    notes = _incidents_by_step(record, view)
    hand_starts: list[int] = []
    splits: dict[int, dict[str, Any]] = {}
    for number, (step, state) in enumerate(zip(actions, states, strict=True), step_of_index(0)):
        d = _describe(step, view)
        if d["kind"] == "deal":
            hand_starts.append(number)
        extra = _resolved_text(prev or new_game(state.rules), state, step, view)
        if extra is not None:
            d["resolved"] = extra
            d["text"] += f" → {extra}"
        if number in notes:
            d["incidents"] = notes[number]
        if d["kind"] == "drawStock" and prev is not None and view in (None, d["seat"]):
            # The card drawn: seen by the seat that drew it (and in the all-cards view).
            new = set(state.hand(d["seat"])) - set(prev.hand(d["seat"]))
            if len(new) == 1:
                d["text"] += f" ({new.pop()})"
        prev = state
        think = d.get("think")
        if think is not None and bank0 is not None and 0 <= d["seat"] < n:
            b = banks[d["seat"]]
            if b is not None:
                banks[d["seat"]] = max(0.0, b - max(0.0, think - per_move))
            d["bank_left"] = banks[d["seat"]]
        d["step"] = number
        d["table"] = full_view(state, names) if view is None else seat_view(state, view, names)
        _arrange(d["table"], state, splits)
        if len(state.results) > hands_before:
            d["hand_result"] = len(state.results) - 1
            hands_before = len(state.results)
        out_steps.append(d)
    return {
        "game_id": record.get("gameId", ""),
        "names": names,
        "view": "all" if view is None else view,
        "rules": record.get("rules", {}),
        "labels": record.get("labels", {}),
        "time_control": {"per_move": per_move, "bank": bank0},
        "result": record.get("result", {}),
        "hands": record.get("hands", []),
        "hand_starts": hand_starts,
        "steps": out_steps,
    }

