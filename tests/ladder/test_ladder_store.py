"""The ladders' rows on both backends (issue #28): a game's end and its rating update are
one transaction, so several processes finishing games of one ladder at once (three
stores, as three referee processes hold them, on one SQLite file or one PostgreSQL
database) lose no update and apply none twice; the ratings equal a replay of the stored
games in their order."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence

from chinchon.engine import Outcome, Termination
from chinchon_referee.ladder.ratings import PRIOR, Rating, recompute
from chinchon_referee.ladder.runner import rate
from chinchon_referee.storage import SqlStore, open_store
from chinchon_referee.storage.ladders import LadderGameStatus, LadderRow, LadderStatus

BOTS = [f"b{i}" for i in range(6)]


def _outcome(winner: int) -> Outcome:
    return Outcome(Termination.NORMAL, None, (winner,), (0, 50) if winner == 0 else (50, 0), 3,
                   "test")


def _ladder(store: SqlStore) -> None:
    store.create_ladder(LadderRow("l-1", "ladder", {"name": "ladder"}, LadderStatus.OPEN,
                                  time.time()))
    for b in BOTS:
        assert store.enter_ladder("l-1", b, (PRIOR.mu, PRIOR.sigma))
    assert not store.enter_ladder("l-1", "b0", (PRIOR.mu, PRIOR.sigma))  # entered already


def test_three_processes_finish_one_ladders_games_without_losing_or_doubling_an_update(
        db_target: str) -> None:
    first = open_store(db_target)
    _ladder(first)
    rnd = random.Random(7)
    games = []
    for i in range(60):
        players = rnd.sample(BOTS, 2)
        gid = f"l-1-g{i}"
        first.begin_ladder_game("l-1", gid, players)
        games.append((gid, players, rnd.randrange(2)))
    stores = [first, open_store(db_target), open_store(db_target)]
    go = threading.Barrier(len(stores))
    done: dict[str, list[int]] = {}
    lock = threading.Lock()

    def finish_all(s: SqlStore, order: Sequence[tuple[str, list[str], int]]) -> None:
        go.wait()
        for gid, _, winner in order:
            places = [0, 1] if winner == 0 else [1, 0]
            row = s.finish_ladder_game(gid, _outcome(winner), places, [{}, {}], None, rate)
            if row is not None:
                with lock:
                    done.setdefault(gid, []).append(row.rated or 0)

    threads = [threading.Thread(target=finish_all, args=(s, rnd.sample(games, len(games))))
               for s in stores]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        # Every game finished once, by one of them; the updates numbered 1..60, each once.
        assert sorted(done) == sorted(g for g, _, _ in games)
        assert all(len(v) == 1 for v in done.values())
        assert sorted(v[0] for v in done.values()) == list(range(1, 61))
        stored = first.ladder_games("l-1")
        again = recompute((g.players, g.places or []) for g in stored)
        for e in first.entrants("l-1"):
            r = again.get(e.bot, PRIOR)
            assert (e.mu, e.sigma) == (r.mu, r.sigma), e.bot
            assert e.games == sum(e.bot in g.players for g in stored)
        assert first.ladder("l-1").rated == 60  # type: ignore[union-attr]
        assert first.ladder_game_counts("l-1") == {LadderGameStatus.FINISHED: 60}
    finally:
        for s in stores:
            s.close()


def test_a_voided_game_is_never_rated_and_a_removed_entrant_keeps_its_rating(
        db_target: str) -> None:
    store = open_store(db_target)
    try:
        _ladder(store)
        store.begin_ladder_game("l-1", "g-a", ["b0", "b1"])
        store.begin_ladder_game("l-1", "g-b", ["b2", "b3"])
        assert store.void_ladder_games("l-1") == 2
        assert store.finish_ladder_game("g-a", _outcome(0), [0, 1], [{}, {}], None, rate) is None
        store.begin_ladder_game("l-1", "g-c", ["b0", "b1"])
        aborted = Outcome(Termination.ABORTED, None, (), (0, 0), 0, "stopped")
        row = store.finish_ladder_game("g-c", aborted, None, [{}, {}], None, rate)
        assert row is not None and row.status is LadderGameStatus.VOID and row.rated is None
        assert store.ladder_games("l-1") == []
        store.begin_ladder_game("l-1", "g-d", ["b0", "b1"])
        store.finish_ladder_game("g-d", _outcome(0), [0, 1], [{"timeouts": 1}, {}],
                                 {"gameId": "g-d"}, rate)
        b0 = next(e for e in store.entrants("l-1") if e.bot == "b0")
        assert store.remove_entrant("l-1", "b0") and not store.remove_entrant("l-1", "b0")
        kept = next(e for e in store.entrants("l-1") if e.bot == "b0")
        assert kept.removed and (kept.mu, kept.sigma, kept.games) == (b0.mu, b0.sigma, 1)
        assert Rating(kept.mu, kept.sigma).mu > PRIOR.mu
        assert store.enter_ladder("l-1", "b0", (PRIOR.mu, PRIOR.sigma))  # back, as it was
        back = next(e for e in store.entrants("l-1") if e.bot == "b0")
        assert not back.removed and back.mu == b0.mu
        one = store.ladder_game("g-d")
        assert one is not None and one.record == {"gameId": "g-d"} and one.stats is not None
        assert store.ladder_games("l-1", bot="b1")[0].id == "g-d"
        assert store.ladder_games("l-1", bot="b2") == []
    finally:
        store.close()
