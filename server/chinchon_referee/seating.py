"""Which game of a tournament the director starts next, and how; and each game's spec
(its twin's suit relabelling included)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from .absence import Absences, Presence
from .cluster import Cluster
from .referee import GameSpec, Referee, Seat
from .storage import GameRow, Store
from .tournament import TournamentSpec
from .twins import twin_indices

#: Sharing the database, the first games each process may begin at.
SPREAD = 16


class Seating:
    def __init__(self, referee: Referee, store: Store, cluster: Cluster | None) -> None:
        self.referee = referee
        self.store = store
        self.cluster = cluster
        self._absent: dict[str, Absences] = {}
        self._twins: dict[str, dict[str, int]] = {}  # tournament -> game id -> twin index

    def know_twins(self, tid: str, games: list[GameRow]) -> None:
        """``games``: the whole schedule of ``tid``, a tournament of duplicate deals."""
        self._twins[tid] = twin_indices(games)

    def absences(self, tid: str, spec: TournamentSpec) -> Absences:
        return self._absent.setdefault(tid, Absences(spec.policies.absence_limit))

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
    ) -> tuple[GameRow, str, list[Seat] | None] | None:
        """The game to start now and how ("seated", "forfeit" or "wait"), or None.

        In schedule order: a game of a bot absent past the absence limit forfeits at
        once; a game of a bot absent for less is postponed; any other game starts when
        its bots have free streams. When nothing runs (``idle``) and nothing can start,
        the first pending game is due: its bots get the grace, then they forfeit it.
        Shared: a game of a bot connected to another process only is left to it."""
        now = time.monotonic()
        due = None
        for game in self._order(pending):
            if self._elsewhere(game.players):
                continue
            due = due or game
            presence = absent.presence(game.players, now)
            if presence is Presence.FORFEIT:
                return game, "forfeit", None
            if presence is Presence.POSTPONE:
                continue
            seats = self.referee.seats_for(self.game_spec(tid, spec, game))
            if seats is not None:
                return game, "seated", seats
        if idle and due is not None:
            return due, "wait", None
        return None

    def _order(self, pending: list[GameRow]) -> list[GameRow]:
        """Schedule order; sharing the database, each process begins at a place of its
        own among the first games, so that processes seldom try to claim the same game."""
        if self.cluster is None or len(pending) < 2:
            return pending
        k = self.cluster.slot % min(len(pending), SPREAD)
        return pending[k:SPREAD] + pending[:k] + pending[SPREAD:]

    def game_spec(self, tid: str, spec: TournamentSpec, game: GameRow) -> GameSpec:
        return GameSpec(
            game_id=game.id, rules=spec.rules, players=game.players, seed=spec.seed,
            deal_id=game.deal_id, time_control=spec.time_control, policies=spec.policies,
            tournament_id=tid, labels={"tournament": tid, "seq": str(game.seq)},
            relabel=self._twin_index(tid, spec, game),
        )

    def _twin_index(self, tid: str, spec: TournamentSpec, game: GameRow) -> int | None:
        """The suit relabelling of a twin game (duplicate deals), None otherwise."""
        if not spec.duplicate_deals:
            return None
        if game.id not in self._twins.get(tid, {}):
            self._twins[tid] = twin_indices(self.store.schedule(tid))
        return self._twins[tid][game.id]

