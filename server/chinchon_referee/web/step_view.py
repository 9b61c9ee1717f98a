"""One decision of a finished game as its bot received it: the observation and the
legal actions of ``ActionRequest``, in protobuf's JSON mapping, to paste into a bot's
unit test (``/api/g/GAME/step/N``).

The observation is the engine's own ``observation`` of the seat that acted at step N,
converted by the wire's own ``observation_to_wire``, so it is the message the referee
sent; the legal actions likewise. It names the cards of that seat's hand, so it is
served only where the game's record (every card) is: a finished game (finished.py
decides); or, for a game in progress, to the admin token of the organizer's full view,
as far as that view shows the game (its delay behind)."""

from __future__ import annotations

from typing import Any

from chinchon.engine import GameState, RuleSet, legal_actions, new_game, observation
from chinchon.engine.record import replay, rules_from_json
from chinchon.engine.steps import incident_step, index_of_step, step_of_index
from chinchon.wire import action_to_wire, observation_to_wire
from google.protobuf.json_format import MessageToDict

from .live import apply_step
from .replay import MAX_STEPS, ViewError


def parse_step(text: str) -> int:
    """A step number (1 or more) from the URL; ViewError otherwise."""
    if not (text.isascii() and text.isdigit()) or len(text) > 6 or int(text) < 1:
        raise ViewError("step: a step number, 1 or more (step 1 is the first deal)")
    return int(text)


def decisions(actions: list[Any], seat: int | None) -> list[int]:
    """The steps of ``actions`` (a record's) that ``seat`` decided (None: any seat)."""
    return [step_of_index(i) for i, a in enumerate(actions)
            if isinstance(a, dict) and isinstance(a.get("move"), dict)
            and (seat is None or a["move"].get("seat", 0) == seat)]


def nearest(steps: list[int], step: int) -> str:
    """The steps of ``steps`` nearest ``step`` (the one before, the one after), in words."""
    before = [s for s in steps if s < step][-1:]
    after = [s for s in steps if s > step][:1]
    near = before + after
    return "nearest: step " + " and step ".join(map(str, near)) if near else "none"


def _not_decided(actions: list[Any], step: int, seat: int | None, why: str) -> ViewError:
    """The error for a step that is no decision of ``seat``: ``why``, and the nearest
    steps that were (of ``seat``, or of any seat)."""
    whose = "decisions" if seat is None else f"seat {seat}'s decisions"
    return ViewError(f"{why}; {whose}: {nearest(decisions(actions, seat), step)}")


def step_request(record: dict[str, Any], step: int, seat: int | None) -> dict[str, Any]:
    """What the seat deciding at ``step`` (1-based, as the replay numbers steps:
    :mod:`chinchon.engine.steps`) was sent: ``observation`` and ``legalActions``
    (protobuf JSON), with the answer the record holds and the answers refused before
    it (``incidents``). ``seat``, if given, must be that seat. Raises ViewError for a
    step that is no decision (a deal, a reshuffle, past the end; naming the nearest
    steps that were) and RecordError for a record the engine refuses."""
    actions = record.get("actions", [])
    if not isinstance(actions, list) or len(actions) > MAX_STEPS:
        raise ViewError(f"a record of at most {MAX_STEPS} steps can be viewed")
    index = index_of_step(step)
    if index >= len(actions):
        raise _not_decided(actions, step, seat, f"step {step}: the game has {len(actions)} steps")
    move = actions[index].get("move") if isinstance(actions[index], dict) else None
    if not isinstance(move, dict):
        raise _not_decided(actions, step, seat,
                           f"step {step} is chance (a deal or a reshuffle): no bot decided it")
    acted = int(move.get("seat", 0))
    if seat is not None and seat != acted:
        raise _not_decided(actions, step, seat,
                           f"step {step} was seat {acted}'s decision, not seat {seat}'s")
    states: list[GameState] = []
    rp = replay(record, lambda st, i: states.append(st) if i < index else None)
    before = states[index - 1] if index >= 1 else new_game(rules_from_json(record.get("rules", {})))
    out = _request(str(record.get("gameId", "")), step, before, acted, rp.names, move)
    notes = record.get("incidents", [])
    out["incidents"] = [n for n in notes if isinstance(n, dict) and incident_step(n) == step] \
        if isinstance(notes, list) else []
    return out


def live_step_request(game_id: str, actions: list[dict[str, Any]], rules: RuleSet,
                      names: list[str], step: int, seat: int | None) -> dict[str, Any]:
    """The same for a game in progress, from its record's ``actions`` so far (the
    organizer's full view: as far as its delay shows the game)."""
    if step > len(actions):
        raise ViewError(f"step {step} is not shown yet: the full view shows {len(actions)} "
                        "steps of this game (it lags the game by its delay)")
    index = index_of_step(step)
    move = actions[index].get("move")
    if not isinstance(move, dict):
        raise ViewError(f"step {step} is chance (a deal or a reshuffle): no bot decided it")
    acted = int(move.get("seat", 0))
    if seat is not None and seat != acted:
        raise ViewError(f"step {step} was seat {acted}'s decision, not seat {seat}'s")
    before = new_game(rules)
    for a in actions[:index]:
        before = apply_step(before, a)
    return _request(game_id, step, before, acted, names, move)


def _request(game_id: str, step: int, before: GameState, acted: int, names: list[str],
             move: dict[str, Any]) -> dict[str, Any]:
    obs = observation(before, acted, names)
    return {
        "game_id": game_id,
        "step": step,
        "seat": acted,
        "name": names[acted],
        "observation": MessageToDict(observation_to_wire(obs)),
        "legalActions": [MessageToDict(action_to_wire(a)) for a in legal_actions(before)],
        "answer": move.get("action", {}),
        "origin": move.get("origin", "ACTION_ORIGIN_PLAYER"),
    }
