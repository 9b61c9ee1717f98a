"""Games in progress, as spectators may see them, in the web process.

The referee feeds each game's start (who plays, the rules, the clock), then the
record's new actions as they are played, with the seats' clocks and counts
(mirror.py): a :class:`LiveTable` replays them with the engine itself (the record holds
the deals), so it holds the very state the referee holds, a moment later. The
spectator's view is built only when a page asks for it, and only from
``table.spectator_view`` (no hand, no stock order, no face-down closing discard) plus
public facts: the seats' clocks and counts, and the kinds of the last moves (never
their cards: a close names the face-down discard).

The organizer's full view (every hand) is built only from a state at least ``delay``
seconds old (:meth:`LiveGames.delayed`): when it is on, each table keeps a sampled
history of its states (at most :data:`HISTORY_SAMPLES` per ``delay``), never a newer
one than needed.

Bots' recent latency (their think times) is kept here too, per bot, for the home page.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chinchon.engine import (
    CARDS,
    Card,
    Deal,
    GameState,
    Reshuffle,
    action_from_json,
    apply,
    new_game,
    observation,
)
from chinchon.engine.record import hand_result_to_json, rules_from_json

from ..logs import get_logger
from .sse import Topic
from .table import full_view, spectator_view

log = get_logger("web")

#: Moves listed on a live page (the newest).
LAST_MOVES = 12
#: Think times kept per bot for its recent latency.
LATENCY_SAMPLES = 50
#: Bots whose latency is kept (the oldest is forgotten past this).
MAX_BOTS = 10_000
#: Games that ended kept for their pages' last snapshot.
ENDED_KEPT = 200
#: States kept per game for the delayed full view, at most, over its delay.
HISTORY_SAMPLES = 300
#: Games in progress a feed may announce at once (far above any referee's).
MAX_TABLES = 10_000

_CARD = {str(c): c for c in CARDS}


def _cards(texts: list[str]) -> tuple[Card, ...]:
    return tuple(_CARD[t] for t in texts)


def shown_by_move(before: GameState, after: GameState) -> tuple[str, ...]:
    """The cards a move showed everyone: those its public events name (a discard, the
    card taken from the pile, a card laid off) and those it laid on the table. Nothing
    when the move ended the hand (a close's discard is face down; its result shows the
    hand)."""
    if after.hand_no != before.hand_no or len(after.events) < len(before.events):
        return ()
    out = [str(e.card) for e in after.events[len(before.events):] if e.card is not None]
    on_table = {c for t in before.table for c in t.meld.cards}
    out += [str(c) for t in after.table for c in t.meld.cards if c not in on_table]
    return tuple(dict.fromkeys(out))


def public_cards(state: GameState) -> set[str]:
    """The cards of the hand in play that every seat knows: what each seat's observation
    shows besides its own hand (the pile, the table, this hand's public events), common
    to all seats."""
    known: set[str] | None = None
    for seat in range(state.n):
        obs = observation(state, seat)
        mine = {str(c) for c in obs.discard_pile} | {str(c) for t in obs.table for c in t.meld.cards}
        mine |= {str(e.card) for e in obs.events if e.card is not None}
        known = mine if known is None else known & mine
    return known or set()


def _result(state: GameState) -> dict[str, Any] | None:
    """How the game ended, once the engine says it did (None before, and for a game that
    ended otherwise: a forfeit, an abort; its record says why)."""
    r = state.result
    if r is None:
        return None
    return {"end": r.end.name.lower(), "winners": list(r.winners), "totals": list(r.totals),
            "hands_played": r.hands_played}


def apply_step(state: GameState, step: dict[str, Any]) -> GameState:
    """One action of a record (a deal, a reshuffle or a move) applied to ``state``."""
    ((kind, body),) = step.items()
    if kind == "move":
        return apply(state, action_from_json(body["action"]), seat=int(body.get("seat", 0)))
    if kind == "deal":
        return apply(state, Deal(_cards(body["deck"]), int(body.get("starter", 0))))
    if kind == "reshuffle":
        return apply(state, Reshuffle(_cards(body["order"])))
    raise ValueError(f"unknown step {kind!r}")


@dataclass(frozen=True)
class Past:
    """A state a table was in: when (time.time()) and after how many steps."""

    at: float
    state: GameState
    steps: int


@dataclass(frozen=True)
class GameInfo:
    """What the referee said of a game when it started."""

    game_id: str
    tournament_id: str
    names: list[str]
    per_move: float
    bank: float
    max_strikes: int
    remote: list[bool]
    practice: bool

    @classmethod
    def from_feed(cls, m: dict[str, Any]) -> GameInfo:
        return cls(str(m["g"]), str(m.get("t", "")), [str(n) for n in m["p"]],
                   float(m["tc"][0]), float(m["tc"][1]), int(m["ms"]),
                   [bool(r) for r in m["remote"]], bool(m.get("practice")))


@dataclass
class LiveTable:
    info: GameInfo
    state: GameState
    topic: Topic
    #: The record's actions so far.
    actions: list[dict[str, Any]] = field(default_factory=list)
    #: time.time() of the last step: when the seat to act started thinking.
    since: float = 0.0
    #: Step index -> illegal answers before that move (as the referee counted them).
    marks: dict[int, int] = field(default_factory=dict)
    #: Step index -> the cards the move showed everyone (the one discarded or taken
    #: from the pile, those laid down or off; never a close's face-down discard).
    shown: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Per seat: [bank, strikes, illegal, timeouts].
    seats: list[list[float]] = field(default_factory=list)
    over: bool = False
    #: Past states for the delayed full view (empty when it is off), oldest first.
    history: deque[Past] = field(default_factory=lambda: deque(maxlen=HISTORY_SAMPLES + 10))


class LiveGames:
    def __init__(self, keep: float | None = None) -> None:
        """``keep``: the delay of the organizer's full view in seconds (None: it is off,
        and no past state is kept)."""
        self.keep = keep
        self.tables: dict[str, LiveTable] = {}
        self._ended: deque[str] = deque()
        self.latency: dict[str, deque[float]] = {}
        #: Called with a game's tournament id when it starts or ends.
        self.on_change: list[Callable[[str], None]] = []

    # -- what the feed says -------------------------------------------------------------
    def started(self, m: dict[str, Any]) -> None:
        info = GameInfo.from_feed(m)
        old = self.tables.get(info.game_id)
        if old is None and len(self.tables) >= MAX_TABLES + ENDED_KEPT:
            raise ValueError("too many games announced")
        if old is not None and not old.over:
            old.topic.bump()  # a resend from the start: the same game, again
        n = len(info.names)
        rules = rules_from_json(m["r"])
        if rules.players != n:
            raise ValueError(f"{n} players for a rule set of {rules.players}")
        self.tables[info.game_id] = LiveTable(
            info, new_game(rules), old.topic if old is not None else Topic(),
            since=float(m.get("at", time.time())),
            seats=[[info.bank, 0, 0, 0] for _ in range(n)])
        self._changed(info.tournament_id)

    def stepped(self, m: dict[str, Any]) -> None:
        """New actions of a game (from index ``n``), its seats' clocks and counts."""
        t = self.tables.get(str(m["g"]))
        if t is None or t.over:
            return
        if int(m["n"]) != len(t.actions):
            raise ValueError(f"game {t.info.game_id}: actions from {m['n']}, "
                             f"{len(t.actions)} known")
        state = t.state
        for step in m["a"]:
            before, state = state, apply_step(state, step)
            t.actions.append(step)
            mv = step.get("move")
            if mv is not None:
                t.shown[len(t.actions) - 1] = shown_by_move(before, state)
            if mv is not None and mv.get("thinkTime"):
                seat = int(mv.get("seat", 0))
                if 0 <= seat < len(t.info.remote) and t.info.remote[seat]:
                    self._latency(t.info.names[seat], float(str(mv["thinkTime"]).rstrip("s")))
        t.state = state
        for k, v in m.get("m", {}).items():
            t.marks[int(k)] = int(v)
        seats = m.get("s")
        if isinstance(seats, list) and len(seats) == len(t.seats):
            t.seats = [[float(x) for x in s[:4]] for s in seats]
        t.since = float(m.get("since", time.time()))
        self._remember(t, time.time())
        t.topic.bump()

    def ended(self, gid: str) -> None:
        t = self.tables.get(gid)
        if t is None or t.over:
            return
        t.over = True
        self._remember(t, time.time(), force=True)
        self._forget_ended()
        t.topic.bump()
        self._ended.append(gid)
        while len(self._ended) > ENDED_KEPT:
            self.tables.pop(self._ended.popleft(), None)
        self._changed(t.info.tournament_id)

    def clear(self) -> None:
        """The feed is gone (or starts over): every table ends here."""
        for gid in [g for g, t in self.tables.items() if not t.over]:
            self.ended(gid)

    # -- kept states --------------------------------------------------------------------
    def _remember(self, t: LiveTable, now: float, force: bool = False) -> None:
        """Keep ``t``'s state for the delayed full view: one every ``keep / SAMPLES`` s at
        most, and only the newest state older than ``keep``."""
        if self.keep is None:
            return
        h = t.history
        if force or not h or now - h[-1].at >= self.keep / HISTORY_SAMPLES:
            h.append(Past(now, t.state, len(t.actions)))
        while len(h) >= 2 and h[1].at <= now - self.keep:
            h.popleft()

    def _forget_ended(self) -> None:
        """Ended games whose last state is older than the delay need no other."""
        if self.keep is None:
            return
        cutoff = time.time() - self.keep
        for gid in self._ended:
            t = self.tables.get(gid)
            if t is not None and len(t.history) > 1 and t.history[-1].at <= cutoff:
                last = t.history[-1]
                t.history.clear()
                t.history.append(last)

    def _changed(self, tid: str) -> None:
        for f in self.on_change:
            f(tid)

    def _latency(self, bot: str, seconds: float) -> None:
        q = self.latency.get(bot)
        if q is None:
            if len(self.latency) >= MAX_BOTS:
                self.latency.pop(next(iter(self.latency)))
            q = self.latency[bot] = deque(maxlen=LATENCY_SAMPLES)
        q.append(seconds)

    def recent_latency(self, bot: str) -> float | None:
        """The median of the bot's recent think times (seconds), or None."""
        q = self.latency.get(bot)
        if not q:
            return None
        xs = sorted(q)
        return xs[len(xs) // 2]

    # -- what pages see -----------------------------------------------------------------
    def running(self, tournament_id: str | None = None) -> list[dict[str, Any]]:
        """The games in progress (of one tournament, if given): who plays, the scores."""
        out = []
        for gid, t in self.tables.items():
            info = t.info
            if t.over or (tournament_id is not None and info.tournament_id != tournament_id):
                continue
            out.append({"id": gid, "tournament": info.tournament_id, "players": list(info.names),
                        "scores": list(t.state.scores), "hand_no": t.state.hand_no,
                        "practice": info.practice})
        return out

    def public(self, gid: str) -> dict[str, Any] | None:
        """The spectator's view of game ``gid`` (None: not in progress here)."""
        t = self.tables.get(gid)
        if t is None:
            return None
        info = t.info
        out = spectator_view(t.state, info.names)
        for s, (bank, strikes, illegal, timeouts), remote in zip(out["seats"], t.seats, info.remote,
                                                                 strict=True):
            s.update(bank=round(bank, 3), strikes=int(strikes), illegal=int(illegal),
                     timeouts=int(timeouts), house=not remote)
        moves = []
        actions = t.actions
        # A move's cards are named only while they are public now: a card of a past hand
        # may be in a hand again.
        public = public_cards(t.state)
        for i in range(len(actions) - 1, -1, -1):
            mv = actions[i].get("move")
            if mv is None:
                moves.append({"step": i, "seat": -1, "kind": next(iter(actions[i]), "")})
            else:
                moves.append({"step": i, "seat": mv.get("seat", 0),
                              "kind": next(iter(mv["action"]), ""),
                              "origin": mv.get("origin", ""), "think": mv.get("thinkTime", ""),
                              "illegal_before": t.marks.get(i, 0),
                              "cards": [c for c in t.shown.get(i, ()) if c in public]})
            if len(moves) >= LAST_MOVES:
                break
        out.update(
            game_id=gid, tournament_id=info.tournament_id, over=t.over, steps=len(actions),
            per_move=info.per_move, bank=info.bank, since=t.since, now=time.time(),
            max_strikes=info.max_strikes, moves=moves,
            # Finished hands are shown face up to everyone (as in observation()).
            hands=[hand_result_to_json(r) for r in t.state.results],
            result=_result(t.state),
        )
        return out

    def delayed(self, gid: str, delay: float) -> dict[str, Any] | None:
        """The organizer's full view of game ``gid``: every hand and the stock, as the
        table was ``delay`` seconds ago at least (None: not in progress here). Before
        the game is that old, a table with no card at all (``pending``)."""
        t = self.tables.get(gid)
        if t is None:
            return None
        now = time.time()
        past = None
        for p in t.history:  # oldest first: the newest one old enough
            if p.at > now - delay:
                break
            past = p
        meta = {"game_id": gid, "tournament_id": t.info.tournament_id, "delay": delay,
                "live_steps": len(t.actions), "over": t.over, "now": now}
        if past is None:
            return {**meta, "view": "all", "pending": True,
                    "seats": [{"seat": i, "name": n} for i, n in enumerate(t.info.names)]}
        out = full_view(past.state, t.info.names)
        out.update(meta, pending=False, steps=past.steps, at=past.at,
                   hands=[hand_result_to_json(r) for r in past.state.results])
        return out

    def delayed_steps(self, gid: str, delay: float) -> tuple[list[dict[str, Any]], GameState] | None:
        """The record's actions of game ``gid`` as far as its full view shows them
        (``delay`` seconds ago at least: none before the game is that old), with its
        current state (for the rule set); None if it is not in progress here."""
        t = self.tables.get(gid)
        if t is None:
            return None
        now = time.time()
        shown = 0
        for p in t.history:
            if p.at > now - delay:
                break
            shown = p.steps
        return t.actions[:shown], t.state

    def topic(self, gid: str) -> Topic | None:
        t = self.tables.get(gid)
        return None if t is None else t.topic
