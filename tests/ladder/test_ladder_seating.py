"""A bot never sits at two tables of one ladder, and a ladder game whose process died is
voided by its lease (shared mode), at the store: :meth:`begin_ladder_game`
refuses a table exactly when one of its players is at a running game of the ladder (a
hypothesis property against a model: the games that run are always disjoint), and
:meth:`void_expired_ladder_games` voids exactly the games whose lease ran out, whose late
results are then refused."""

from __future__ import annotations

import time
from pathlib import Path

from chinchon.engine import Outcome, Termination
from chinchon_referee.ladder.ratings import PRIOR
from chinchon_referee.ladder.runner import rate
from chinchon_referee.storage import SqlStore, open_store
from chinchon_referee.storage.ladders import LadderGameStatus, LadderRow, LadderStatus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BOTS = [f"b{i}" for i in range(6)]
WIN = Outcome(Termination.NORMAL, None, (0,), (0, 50), 3, "test")


def _ladder(store: SqlStore, lid: str) -> None:
    store.create_ladder(LadderRow(lid, "ladder", {"name": "ladder"}, LadderStatus.OPEN,
                                  time.time()))
    for b in BOTS:
        store.enter_ladder(lid, b, (PRIOR.mu, PRIOR.sigma))


#: A step: begin a table of these players (2 to 4 of the bots), or end the n-th running
#: game (finished and rated, or voided).
_begin = st.tuples(st.just("begin"), st.lists(st.sampled_from(BOTS), min_size=2, max_size=4,
                                               unique=True))
_end = st.tuples(st.sampled_from(["finish", "void"]), st.integers(0, 5))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.one_of(_begin, _end), min_size=1, max_size=30))
def test_a_table_is_refused_exactly_when_a_player_is_at_a_running_game(
        tmp_path: Path, steps: list[tuple[str, object]]) -> None:
    store = open_store(str(tmp_path / f"seat-{time.monotonic_ns()}.sqlite3"))
    try:
        _ladder(store, "l-1")
        running: dict[str, list[str]] = {}  # the model
        for n, (kind, arg) in enumerate(steps):
            if kind == "begin":
                players = list(arg)  # type: ignore[call-overload]
                held = {b for ps in running.values() for b in ps}
                busy = store.begin_ladder_game("l-1", f"g{n}", players, "proc", 10.0)
                assert busy == held & set(players)
                if not busy:
                    running[f"g{n}"] = players
            elif running:
                gid = sorted(running)[int(arg) % len(running)]  # type: ignore[call-overload]
                ps = running.pop(gid)
                places = list(range(len(ps))) if kind == "finish" else None
                row = store.finish_ladder_game(gid, WIN, places, [{}] * len(ps), None, rate)
                assert row is not None and row.status is (
                    LadderGameStatus.FINISHED if kind == "finish" else LadderGameStatus.VOID)
            assert set(store.busy_ladder_bots("l-1")) == {b for ps in running.values()
                                                          for b in ps}
        assert store.ladder_game_counts("l-1").get(LadderGameStatus.RUNNING, 0) == len(running)
    finally:
        store.close()


def test_a_game_whose_lease_ran_out_is_voided_and_its_late_result_refused(
        db_target: str) -> None:
    store = open_store(db_target)
    try:
        _ladder(store, "l-1")
        _ladder(store, "l-2")
        # Alive: renewed. Dead: its lease ran out a second ago (its process stopped
        # renewing). Local: a single referee's game, with no lease (never voided so).
        assert store.begin_ladder_game("l-1", "alive", ["b0", "b1"], "p-alive", 10.0) == set()
        assert store.begin_ladder_game("l-1", "dead", ["b2", "b3"], "p-dead", -1.0) == set()
        assert store.begin_ladder_game("l-2", "local", ["b2", "b3"]) == set()
        assert store.begin_ladder_game("l-1", "again", ["b3", "b4"], "p-alive", 10.0) == {"b3"}
        assert store.renew_leases("p-alive", 10.0) == 1
        assert store.void_expired_ladder_games(0.5) == 1
        assert store.void_expired_ladder_games(0.5) == 0
        counts = store.ladder_game_counts("l-1")
        assert counts == {LadderGameStatus.RUNNING: 1, LadderGameStatus.VOID: 1}
        assert store.ladder_game_counts("l-2") == {LadderGameStatus.RUNNING: 1}
        # The dead process's result, arriving late, is refused: never rated.
        assert store.finish_ladder_game("dead", WIN, [0, 1], [{}, {}], None, rate) is None
        assert store.ladder("l-1").rated == 0  # type: ignore[union-attr]
        # Its bots are free: a table of them begins.
        assert store.begin_ladder_game("l-1", "again", ["b3", "b4"], "p-alive", 10.0) == set()
        assert store.busy_ladder_bots("l-1") == {"b0": "p-alive", "b1": "p-alive",
                                                 "b3": "p-alive", "b4": "p-alive"}
        # A process that stops cleanly voids its own games at once.
        assert store.void_ladder_games(None, "p-alive") == 2
        assert store.busy_ladder_bots("l-1") == {}
        assert store.ladder_game_counts("l-2") == {LadderGameStatus.RUNNING: 1}
    finally:
        store.close()
