"""The ladders' rows on both backends: a game's end and its rating update are
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
    stores = [first, open_store(db_target), open_store(db_target)]
    done: dict[str, list[int]] = {}
    lock = threading.Lock()
    begun: list[str] = []

    def finish_all(s: SqlStore, go: threading.Barrier,
                   order: Sequence[tuple[str, list[str], int]]) -> None:
        go.wait()
        for gid, _, winner in order:
            places = [0, 1] if winner == 0 else [1, 0]
            row = s.finish_ladder_game(gid, _outcome(winner), places, [{}, {}], None, rate)
            if row is not None:
                with lock:
                    done.setdefault(gid, []).append(row.rated or 0)

    try:
        # 20 rounds of three tables (no bot at two running tables of a ladder), each
        # round's three games finished by all three stores at once, in their own orders:
        # every bot's rating is read and written by racing transactions.
        for r in range(20):
            bots = rnd.sample(BOTS, len(BOTS))
            games = []
            for t in range(3):
                players, gid = bots[2 * t:2 * t + 2], f"l-1-g{r}-{t}"
                assert first.begin_ladder_game("l-1", gid, players) == set()
                games.append((gid, players, rnd.randrange(2)))
                begun.append(gid)
            go = threading.Barrier(len(stores))
            threads = [threading.Thread(target=finish_all,
                                        args=(s, go, rnd.sample(games, len(games))))
                       for s in stores]
            for t_ in threads:
                t_.start()
            for t_ in threads:
                t_.join(120)
        # Every game finished once, by one of them; the updates numbered 1..60, each once.
        assert sorted(done) == sorted(begun)
        assert all(len(v) == 1 for v in done.values())
        assert sorted(v[0] for v in done.values()) == list(range(1, 61))
        stored = first.ladder_games("l-1")
        again = recompute((g.players, g.places or []) for g in stored)
        for e in first.entrants("l-1"):
            r_ = again.get(e.bot, PRIOR)
            assert (e.mu, e.sigma) == (r_.mu, r_.sigma), e.bot
            assert e.games == sum(e.bot in g.players for g in stored)
        assert first.ladder("l-1").rated == 60  # type: ignore[union-attr]
        assert first.ladder_game_counts("l-1") == {LadderGameStatus.FINISHED: 60}
    finally:
        for s in stores:
            s.close()


def test_three_processes_racing_to_seat_never_put_a_bot_at_two_running_tables(
        db_target: str) -> None:
    """Three stores (as three processes sharing a database) begin games of one ladder
    at once, over the same six bots: the games that begin are pairwise disjoint, and
    each refusal names a bot that a begun game holds."""
    first = open_store(db_target)
    _ladder(first)
    stores = [first, open_store(db_target), open_store(db_target)]
    go = threading.Barrier(len(stores))
    begun: dict[str, list[str]] = {}
    refused: list[tuple[list[str], set[str]]] = []
    lock = threading.Lock()

    def seat(s: SqlStore, i: int) -> None:
        rnd = random.Random(i)
        go.wait()
        for n in range(30):
            players, gid = rnd.sample(BOTS, 2), f"l-1-p{i}-{n}"
            busy = s.begin_ladder_game("l-1", gid, players, f"proc-{i}", 10.0)
            with lock:
                if busy:
                    refused.append((players, busy))
                else:
                    begun[gid] = players

    threads = [threading.Thread(target=seat, args=(s, i)) for i, s in enumerate(stores)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert 1 <= len(begun) <= 3 and len(refused) == 90 - len(begun)
        held = [b for ps in begun.values() for b in ps]
        assert len(held) == len(set(held))  # no bot at two running tables
        for players, busy in refused:
            assert busy and busy <= set(players) & set(held)
        assert first.ladder_game_counts("l-1") == {LadderGameStatus.RUNNING: len(begun)}
        assert set(first.busy_ladder_bots("l-1")) == set(held)
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


def _timeout_forfeit(seat: int) -> Outcome:
    return Outcome(Termination.FORFEIT_TIMEOUT, None, (1 - seat,), (0, 0), 0, "timeout", seat)


def test_a_bots_forfeits_on_time_suspend_it_durably_and_a_sign_of_life_lifts_it(
        db_target: str) -> None:
    """Each game's end writes its players' forfeits on time in a row with their ratings;
    the count reaching suspend_after suspends the bot, and a reopened store (a restarted
    referee) still holds it; only a sign of life after the suspension began lifts it, and
    the count stands until a game ends otherwise."""
    store = open_store(db_target)
    try:
        _ladder(store)
        for i, (seat, players) in enumerate([(0, ["b0", "b1"]), (1, ["b2", "b0"]),
                                             (1, ["b3", "b1"])]):
            gid = f"lg-h{i}"
            assert store.begin_ladder_game("l-1", gid, players) == set()
            row = store.finish_ladder_game(gid, _timeout_forfeit(seat),
                                           [1, 0] if seat == 0 else [0, 1], [{}, {}], None,
                                           rate, [seat], 2)
            assert row is not None and row.suspended == (["b0"] if i == 1 else [])
    finally:
        store.close()
    store = open_store(db_target)
    try:
        e = {r.bot: r for r in store.entrants("l-1")}
        assert e["b0"].time_forfeits == 2 and e["b0"].suspended is not None
        assert e["b0"].last_time_forfeit == e["b0"].suspended
        assert e["b1"].time_forfeits == 1 and e["b1"].suspended is None  # 2nd game: b3's
        assert e["b2"].time_forfeits == 0
        since = e["b0"].suspended
        assert not store.lift_suspension("l-1", "b0", since - 1.0)  # an older stream
        assert store.lift_suspension("l-1", "b0", since + 1.0)
        assert not store.lift_suspension("l-1", "b0")  # not suspended any more
        e0 = next(r for r in store.entrants("l-1") if r.bot == "b0")
        assert e0.suspended is None and e0.time_forfeits == 2  # on probation
        assert store.begin_ladder_game("l-1", "lg-h3", ["b0", "b4"]) == set()
        row = store.finish_ladder_game("lg-h3", _outcome(0), [0, 1], [{}, {}], None, rate,
                                       [], 2)
        assert row is not None and row.suspended == []
        assert next(r for r in store.entrants("l-1") if r.bot == "b0").time_forfeits == 0
    finally:
        store.close()
