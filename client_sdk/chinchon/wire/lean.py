"""The bot's side of lean requests (``Hello.observations = OBSERVATION_MODE_LEAN``): the
whole observation of each ``ActionRequest``, rebuilt from the last one and what the
request and the ``HandEnded`` messages since then carry (docs/protocol.md, "Lean
requests").

A whole request (no ``delta``) is converted as in full mode and becomes the base; a
lean one reuses the base's rule set, past hands (plus each ``HandEnded`` since) and the
first ``delta.events_kept`` events, and converts only the rest. The result equals
``observation_from_wire`` of the full request the referee would have sent
(``tests/referee/test_lean.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from chinchon.engine import (
    Card,
    HandResult,
    MalformedInput,
    Observation,
    Phase,
    PlayerView,
    TableMeld,
    parse_card,
)
from chinchon.v1 import referee_pb2 as pb

from .convert import (
    PHASE_TO_WIRE,
    event_from_wire,
    hand_result_from_wire,
    observation_from_wire,
    table_from_wire,
)

_PHASES = {v: k for k, v in PHASE_TO_WIRE.items()}


class LeanDecoder:
    """Rebuilds the whole observation of each request of one stream, game by game.

    Feed it every ``ActionRequest`` the stream brings (also those the bot leaves
    unanswered: each carries events the next one will not repeat) and every
    ``HandEnded``; :meth:`forget` a game when it ends."""

    def __init__(self) -> None:
        # game id -> the last observation rebuilt, and the past hands known since
        self._last: dict[str, Observation] = {}
        self._past: dict[str, tuple[HandResult, ...]] = {}
        self._players: dict[tuple[tuple[int, str, int, int, bool], ...], tuple[PlayerView, ...]] = {}
        self._tables: dict[bytes, tuple[TableMeld, ...]] = {}

    def observation(self, req: pb.ActionRequest) -> Observation:
        """The whole observation of ``req``; raises MalformedInput when ``req`` is lean
        and nothing it builds on was received (never, from a referee that keeps to
        the protocol)."""
        msg = req.observation
        game = req.game_id
        if not req.HasField("delta"):
            obs = observation_from_wire(msg)
            self._last[game] = obs
            self._past[game] = obs.past_hands
            return obs
        last = self._last.get(game)
        if last is None:
            raise MalformedInput(f"a lean request of game {game} came before any whole one")
        kept = req.delta.events_kept
        hand_no = msg.hand_number
        if kept and (hand_no != last.hand_no or kept > len(last.events)):
            raise MalformedInput(f"a lean request keeps {kept} events of hand {hand_no}; "
                                 f"{len(last.events)} of hand {last.hand_no} are known")
        rules = last.rules
        events = last.events[:kept] if kept else ()
        if msg.events:
            events += tuple([event_from_wire(e) for e in msg.events])
        key = tuple([(p.seat, p.name, p.hand_size, p.score, p.in_game) for p in msg.players])
        players = self._players.get(key)
        if players is None:
            if len(self._players) > 1024:
                self._players.clear()
            players = self._players[key] = tuple([PlayerView(*p) for p in key])
        table: tuple[TableMeld, ...] = ()
        if msg.table:
            raw = b"".join([m.SerializeToString() for m in msg.table])
            table = self._tables.get(raw, ())
            if not table:
                if len(self._tables) > 256:
                    self._tables.clear()
                table = self._tables[raw] = table_from_wire(msg.table, rules)
        taken = msg.taken_from_discard
        obs = Observation(
            msg.seat, rules, hand_no, _PHASES.get(msg.phase, Phase.DRAW), msg.to_act,
            msg.starter, msg.turn, _cards(msg.hand), _cards(msg.discard_pile), msg.stock_size,
            players, table, events, parse_card(taken) if taken else None, msg.closer,
            self._past.get(game, ()),
        )
        self._last[game] = obs
        return obs

    def hand_ended(self, msg: pb.HandEnded) -> None:
        """A hand of a game ended: its result joins the past hands (of a game this
        stream had a request of; a later whole request brings them otherwise)."""
        last = self._last.get(msg.game_id)
        if last is not None:
            self._past[msg.game_id] += (hand_result_from_wire(msg.result, last.rules),)

    def forget(self, game_id: str) -> None:
        """The game ended: nothing more of it is kept."""
        self._last.pop(game_id, None)
        self._past.pop(game_id, None)

    def games(self) -> int:
        """How many games are remembered (for tests)."""
        return len(self._last)


def _cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple([parse_card(t) for t in texts])
