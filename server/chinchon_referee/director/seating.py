"""Which game of a tournament the director starts next, and how; and each game's spec
(its twin's suit relabelling included)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import enum
import time
from collections import Counter
from collections.abc import Callable, Sequence

from chinchon.engine import attempt_deal

from ..cluster.member import Cluster
from ..logs import get_logger
from ..referee import GameSpec, Referee, Seat, ShuttingDown
from ..storage import GameRow, Store
from ..tournament.model import TournamentSpec, start_time
from ..tournament.twins import replay_relabel, twin_indices, twin_sizes
from .absence import Absences, Presence

log = get_logger("director")
#: Sharing the database, the first games each process may begin at.
SPREAD = 16


class Launch(enum.Enum):
    """How the director starts the game it chose."""

    #: Its bots have free streams: seated now.
    SEATED = "seated"
    #: A bot absent past the absence limit: the game forfeits at once.
    FORFEIT = "forfeit"
    #: Due with nothing else to play: its bots get the grace to take their seats.
    WAIT = "wait"


class Seating:
    def __init__(self, referee: Referee, store: Store, cluster: Cluster | None) -> None:
        self.referee = referee
        self.store = store
        self.cluster = cluster
        self._absent: dict[str, Absences] = {}
        #: Bots held for a due game waiting for them (:meth:`wait_for_seats`).
        self.reserved: Counter[str] = Counter()
        self._twins: dict[str, dict[str, int]] = {}  # tournament -> game id -> twin index
        self._sizes: dict[str, dict[str, int]] = {}  # tournament -> deal id -> twins

    def know_twins(self, tid: str, games: list[GameRow]) -> None:
        """``games``: the whole schedule of ``tid``, a tournament of duplicate deals."""
        self._twins[tid] = twin_indices(games)
        self._sizes[tid] = twin_sizes(games)

    def absences(self, tid: str, spec: TournamentSpec) -> Absences:
        return self._absent.setdefault(tid, Absences(spec.policies.absence_limit))

    async def wait_for_start(self, tid: str, spec: TournamentSpec,
                             emit: Callable[[str], object]) -> None:
        """Wait for a scheduled tournament's start (its time, or its bots), telling
        ``emit`` what it waits for."""
        when = start_time(spec.start)
        if when is not None:
            delay = (when - dt.datetime.now(dt.UTC)).total_seconds()
            if delay > 0:
                emit(f"waiting until {when.isoformat()}")
                await asyncio.sleep(delay)
        elif spec.start == "when_connected":
            emit("waiting for every bot to connect")
            # Wait for everyone, but never forever: after the grace, start anyway and
            # let the absent forfeit.
            lobby = self.referee.lobby
            while not await lobby.wait_all(spec.bots, max(1.0, spec.policies.reconnect_grace)):
                missing = [b for b in spec.bots if not lobby.connected(b)]
                if len(spec.bots) - len(missing) >= 2 or not missing:
                    log.info("starting_without", tournament=tid, missing=missing)
                    break

    async def wait_for_seats(self, tid: str, spec: TournamentSpec, game: GameRow,
                             emit: Callable[[str], object]) -> tuple[list[Seat] | None, list[int]]:
        """A game that is due (nothing else can be played): its seats, taken at once when
        every bot has a free stream; or, once the reconnect grace ran out, the seats of
        its bots that are not connected at all, to forfeit (NO_SHOW). A bot that is
        connected, its streams in other games, is no no-show: the game waits for it, and
        meanwhile no other game takes the streams of its bots (:attr:`reserved`). (None,
        []): a bot is connected to another process only (the game is left to it).
        ShuttingDown if the referee stops meanwhile."""
        lobby, referee = self.referee.lobby, self.referee
        remote = [(i, p) for i, p in enumerate(game.players) if not p.startswith("house:")]
        deadline = time.monotonic() + spec.policies.reconnect_grace
        changed = asyncio.Event()
        stop = lobby.listen(changed.set)
        self.reserved.update(game.players)
        told = False
        try:
            while True:
                if lobby.closing is not None:
                    raise ShuttingDown(lobby.closing)
                seats = referee.seats_for(self.game_spec(tid, spec, game))
                if seats is not None:
                    return seats, []
                if self._elsewhere(game.players):
                    return None, []
                left = deadline - time.monotonic()
                gone = [i for i, p in remote if not referee.connected(p)]
                if left <= 0 and gone:
                    return None, gone
                if left <= 0 and not told:
                    told = True
                    busy = [p for _, p in remote if not lobby.connected(p)]
                    emit(f"game {game.id} waits for {', '.join(busy)}: connected, in "
                         "another game")
                changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), left if left > 0 else None)
        finally:
            stop()
            self.reserved.subtract(game.players)

    def _elsewhere(self, players: Sequence[str]) -> bool:
        """Shared: a player is not connected here but is to another process: the game is
        left to the processes that can seat it (this one never forfeits it)."""
        if self.cluster is None:
            return False
        lobby = self.referee.lobby
        return any(not lobby.connected(p) and self.cluster.present_elsewhere(p) for p in players)

    def next_game(
        self, tid: str, spec: TournamentSpec, pending: list[GameRow], absent: Absences,
        idle: bool,
    ) -> tuple[GameRow, Launch, list[Seat] | None] | None:
        """The game to start now and how (:class:`Launch`), or None.

        In schedule order: a game of a bot absent past the absence limit forfeits at
        once; a game of a bot absent for less is postponed; any other game starts when
        its bots have free streams. When nothing runs (``idle``) and nothing can start,
        the first pending game is due: its bots get the grace, then they forfeit it.
        Shared: a game of a bot connected to another process only is left to it."""
        now = time.monotonic()
        due = None
        for game in self._order(pending):
            if self._elsewhere(game.players) or any(self.reserved[p] for p in game.players):
                continue  # left to another process, or its bots held for a due game
            due = due or game
            presence = absent.presence(game.players, now)
            if presence is Presence.FORFEIT:
                return game, Launch.FORFEIT, None
            if presence is Presence.POSTPONE:
                continue
            seats = self.referee.seats_for(self.game_spec(tid, spec, game))
            if seats is not None:
                return game, Launch.SEATED, seats
        if idle and due is not None:
            return due, Launch.WAIT, None
        return None

    def _order(self, pending: list[GameRow]) -> list[GameRow]:
        """Schedule order; sharing the database, each of the n live processes tries
        first the games whose schedule number is its place among them modulo n (then the
        others', in schedule order, beginning at a place of its own among the first
        games), so that processes seldom try to claim the same game."""
        if self.cluster is None or len(pending) < 2:
            return pending
        k = self.cluster.slot % min(len(pending), SPREAD)
        spread = pending[k:SPREAD] + pending[:k] + pending[SPREAD:]
        place, n = self.cluster.rank()
        if n < 2:
            return spread
        return [g for g in pending if g.seq % n == place] + [
            g for g in spread if g.seq % n != place]

    def game_spec(self, tid: str, spec: TournamentSpec, game: GameRow,
                  attempt: int = 0) -> GameSpec:
        """The spec of ``game``'s ``attempt``-th play (0: its first; n: after n voids),
        dealt anew for each attempt (:func:`chinchon.engine.attempt_deal`); a twin keeps
        its deal under a relabelling of its own (:func:`.twins.replay_relabel`)."""
        labels = {"tournament": tid, "seq": str(game.seq)}
        if attempt:
            labels["attempt"] = str(attempt)
        deal, relabel = game.deal_id, self._twin_index(tid, spec, game)
        if relabel is not None and attempt:
            relabel = replay_relabel(relabel, self._sizes[tid][game.deal_id], attempt)
            if relabel is None:
                deal = attempt_deal(game.deal_id, attempt)
        elif attempt:
            deal = attempt_deal(game.deal_id, attempt)
        return GameSpec(
            game_id=game.id, rules=spec.rules, players=game.players, seed=spec.seed,
            deal_id=deal, time_control=spec.time_control, policies=spec.policies,
            tournament_id=tid, labels=labels, relabel=relabel,
        )

    def _twin_index(self, tid: str, spec: TournamentSpec, game: GameRow) -> int | None:
        """The suit relabelling of a twin game (duplicate deals), None otherwise."""
        if not spec.duplicate_deals:
            return None
        if game.id not in self._twins.get(tid, {}):
            self.know_twins(tid, self.store.schedule(tid))
        return self._twins[tid][game.id]
