"""Games in progress, as spectators may see them.

:class:`LiveGames` is the referee's step observer (``GameServices.observer``): after
each step of a game it keeps a reference to the runner and the new state, and moves
the game's topic on. It copies nothing then: the spectator's view is built only when a
page asks for it, and only from ``table.spectator_view`` (no hand, no stock order, no
face-down closing discard) plus public facts: the seats' clocks and counts, and the
kinds of the last moves (never their cards: a close names the face-down discard).

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

from chinchon.engine import GameState
from chinchon.engine.record import RecordBuilder, hand_result_to_json

from ..logs import get_logger
from ..referee import GameRunner
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


@dataclass(frozen=True)
class Past:
    """A state a table was in: when (time.time()) and after how many steps."""

    at: float
    state: GameState
    steps: int


@dataclass
class LiveTable:
    runner: GameRunner
    state: GameState
    rec: RecordBuilder
    topic: Topic
    #: time.time() of the last step: when the seat to act started thinking.
    since: float
    #: Illegal answers per seat seen so far (to mark the move they came before).
    illegal: list[int]
    #: Seat -> illegal answers before each of the last moves (index into rec.actions).
    marks: dict[int, int] = field(default_factory=dict)
    #: Actions of the record looked at so far.
    noted: int = 0
    over: bool = False
    #: Past states for the delayed full view (empty when it is off), oldest first.
    history: deque[Past] = field(default_factory=lambda: deque(maxlen=HISTORY_SAMPLES + 10))


def _move_kind(action: dict[str, Any]) -> str:
    return next(iter(action), "")


class LiveGames:
    def __init__(self, keep: float | None = None) -> None:
        """``keep``: the delay of the organizer's full view in seconds (None: it is off,
        and no past state is kept)."""
        self.keep = keep
        self.tables: dict[str, LiveTable] = {}
        self._ended: deque[str] = deque()
        #: Moves on when a game starts or ends (the home and tournament pages).
        self.games_topic = Topic()
        self.latency: dict[str, deque[float]] = {}
        #: Called with a game's tournament id when it starts or ends.
        self.on_change: list[Callable[[str], None]] = []

    # -- the referee's observer ---------------------------------------------------------
    def observe(self, runner: GameRunner, state: GameState | None, rec: RecordBuilder | None) -> None:
        """The referee's step observer: never raises (a game must not end because its
        spectators' view failed)."""
        try:
            self._observe(runner, state, rec)
        except Exception:
            log.exception("live_view_failed", game_id=runner.spec.game_id)

    def _observe(self, runner: GameRunner, state: GameState | None, rec: RecordBuilder | None) -> None:
        gid = runner.spec.game_id
        t = self.tables.get(gid)
        if state is None or rec is None:
            if t is not None and not t.over:
                self._note(t)  # a last move that ended the game (a forfeit) was not seen
                t.over = True
                self._remember(t, time.time(), force=True)
                self._forget_ended()
                t.topic.bump()
                self._ended.append(gid)
                while len(self._ended) > ENDED_KEPT:
                    self.tables.pop(self._ended.popleft(), None)
                self._changed(runner)
            return
        if t is None or t.over:
            t = self.tables[gid] = LiveTable(runner, state, rec, Topic(), time.time(),
                                             [0] * len(runner.seats))
            self._changed(runner)
        t.state = state
        t.since = time.time()
        self._note(t)
        self._remember(t, t.since)
        t.topic.bump()

    def _remember(self, t: LiveTable, now: float, force: bool = False) -> None:
        """Keep ``t``'s state for the delayed full view: one every ``keep / SAMPLES`` s at
        most, and only the newest state older than ``keep``."""
        if self.keep is None:
            return
        h = t.history
        if force or not h or now - h[-1].at >= self.keep / HISTORY_SAMPLES:
            h.append(Past(now, t.state, len(t.rec.actions)))
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

    def _note(self, t: LiveTable) -> None:
        """Mark the moves recorded since the last look: illegal answers before them, and
        their think times (the bots' latency)."""
        actions, seats = t.rec.actions, t.runner.seats
        for i in range(t.noted, len(actions)):
            mv = actions[i].get("move")
            if mv is None:
                continue
            seat = mv.get("seat", 0)
            st = seats[seat].stats
            if st.illegal > t.illegal[seat]:
                t.marks[i] = st.illegal - t.illegal[seat]
                t.illegal[seat] = st.illegal
            think = mv.get("thinkTime")
            if think and seats[seat].remote:
                self._latency(seats[seat].name, float(think.rstrip("s")))
        t.noted = len(actions)

    def _changed(self, runner: GameRunner) -> None:
        self.games_topic.bump()
        for f in self.on_change:
            f(runner.spec.tournament_id)

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
            spec = t.runner.spec
            if t.over or (tournament_id is not None and spec.tournament_id != tournament_id):
                continue
            out.append({"id": gid, "tournament": spec.tournament_id, "players": list(spec.players),
                        "scores": list(t.state.scores), "hand_no": t.state.hand_no,
                        "practice": t.runner.practice})
        return out

    def public(self, gid: str) -> dict[str, Any] | None:
        """The spectator's view of game ``gid`` (None: not in progress here)."""
        t = self.tables.get(gid)
        if t is None:
            return None
        runner, spec = t.runner, t.runner.spec
        out = spectator_view(t.state, runner.names)
        tc = spec.time_control
        for s, seat in zip(out["seats"], runner.seats, strict=True):
            s.update(bank=round(seat.bank, 3), strikes=seat.stats.strikes,
                     illegal=seat.stats.illegal, timeouts=seat.stats.timeouts,
                     house=not seat.remote)
        moves = []
        actions = t.rec.actions
        for i in range(len(actions) - 1, -1, -1):
            mv = actions[i].get("move")
            if mv is None:
                kind = next(iter(actions[i]), "")
                moves.append({"step": i, "seat": -1, "kind": kind})
            else:
                moves.append({"step": i, "seat": mv.get("seat", 0), "kind": _move_kind(mv["action"]),
                              "origin": mv.get("origin", ""), "think": mv.get("thinkTime", ""),
                              "illegal_before": t.marks.get(i, 0)})
            if len(moves) >= LAST_MOVES:
                break
        out.update(
            game_id=gid, tournament_id=spec.tournament_id, over=t.over, steps=len(actions),
            per_move=tc.per_move, bank=tc.bank, since=t.since, now=time.time(),
            max_strikes=spec.policies.max_strikes, moves=moves,
            # Finished hands are shown face up to everyone (as in observation()).
            hands=[hand_result_to_json(r) for r in t.state.results],
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
        spec = t.runner.spec
        meta = {"game_id": gid, "tournament_id": spec.tournament_id, "delay": delay,
                "live_steps": len(t.rec.actions), "over": t.over, "now": now}
        if past is None:
            return {**meta, "view": "all", "pending": True,
                    "seats": [{"seat": i, "name": n} for i, n in enumerate(t.runner.names)]}
        out = full_view(past.state, t.runner.names)
        out.update(meta, pending=False, steps=past.steps, at=past.at,
                   hands=[hand_result_to_json(r) for r in past.state.results])
        return out

    def topic(self, gid: str) -> Topic | None:
        t = self.tables.get(gid)
        return None if t is None else t.topic
