"""The schedule's size limit: refused exactly when it is exceeded, by the estimate
before building (a lower bound of the tables) or the exact count after."""

from __future__ import annotations

from chinchon_referee.tournament.model import MAX_GAMES, RoundRobin, SpecError, TournamentSpec, schedule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NAMES = [f"bot{i:02d}" for i in range(20)]


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 24), k=st.integers(2, 4), data=st.data())
def test_a_schedule_is_refused_exactly_when_it_exceeds_the_game_limit(
    n: int, k: int, data: st.DataObject,
) -> None:
    """The size check before building (a lower bound of the tables) never refuses a
    schedule within MAX_GAMES, and the exact check after building refuses every one
    beyond it, naming games_per_pairing and the limit."""
    k = min(k, n)
    bots = NAMES[:n] if n <= len(NAMES) else [f"b{i}" for i in range(n)]
    probe = RoundRobin(bots, k, 1, "s")
    per_table_limit = MAX_GAMES // len(probe.tables)
    g = data.draw(st.sampled_from([1, per_table_limit - k, per_table_limit,
                                   per_table_limit + 1, per_table_limit + k, MAX_GAMES]))
    g = max(1, g)
    actual = len(RoundRobin(bots, k, g, "s"))
    decl = {"name": "cup", "participants": bots, "table_size": k, "games_per_pairing": g,
            "seed": "s"}
    try:
        spec = TournamentSpec.from_dict(decl)
        size = len(schedule(spec, "t"))
    except SpecError as e:
        assert actual > MAX_GAMES, (actual, str(e))
        msg = str(e)
        assert msg.startswith("games_per_pairing:"), msg
        assert f"at most {MAX_GAMES:,}" in msg or f"1 to {MAX_GAMES}, got {g}" in msg, msg
    else:
        assert size == actual <= MAX_GAMES
