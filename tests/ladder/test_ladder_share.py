"""No bot gets more than twice its fair share of a ladder's tables, over long simulated
runs of the ladder's pure core (tests/support/ladder_sim.py: matchmaking seats the idle
bots whenever a table ends; openskill rates each game): with N bots and tables of s, a
bot sits at no more than cap = floor(2 W s / N) of any W = 10 ceil(N / s) consecutive
tables (matchmaking.py's rule 0), and a bot whose games are predictable (its sigma
stays a little above the others') is no longer the first of almost every table."""

from __future__ import annotations

from chinchon_referee.ladder.matchmaking import cap, window
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.ladder_sim import Sim, max_share


def _counts(tables: list[tuple[str, ...]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tables:
        for b in t:
            out[b] = out.get(b, 0) + 1
    return out


def test_a_predictable_weak_bot_is_not_the_anchor_of_almost_every_table() -> None:
    """Eight bots, two tables of two at once, the weakest losing every game (its sigma a
    few thousandths above the others' once they settle: it was seated first whenever it
    was idle, half the tables and more). Over 10,000 games: at most cap (twice a fair
    share) in every window of W, at most 1.5 fair shares in any 150 consecutive games,
    and every bot within 20% of its fair share over the run."""
    strengths = {f"b{i}": float(i) for i in range(8)}
    tables = Sim(strengths, certain=frozenset({"b0"}), seed=11).run(10_000)
    w, most = window(8, 2), cap(8, 2)
    assert (w, most) == (40, 20)  # a fair share: 10 tables of 40
    assert max(max_share(tables, w).values()) <= most
    assert max(max_share(tables, 150).values()) <= 1.5 * 150 * 2 / 8
    fair = len(tables) * 2 / 8
    assert all(0.8 * fair <= n <= 1.2 * fair for n in _counts(tables).values()), \
        _counts(tables)


def _gaps(tables: list[tuple[str, ...]]) -> dict[str, int]:
    """Each bot's most tables in a row without it (its first included)."""
    seen: dict[str, int] = {}
    gap: dict[str, int] = {}
    for i, t in enumerate(tables):
        for b in t:
            gap[b] = max(gap.get(b, 0), i - seen.get(b, -1) - 1)
            seen[b] = i
    return gap


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bots=st.integers(3, 12), size=st.integers(2, 4), concurrency=st.integers(1, 4),
       certain=st.integers(0, 3), spread=st.floats(0.0, 2.0), seed=st.integers(0, 2**16))
def test_no_bot_sits_at_more_than_twice_its_fair_share_of_any_window(
        bots: int, size: int, concurrency: int, certain: int, spread: float,
        seed: int) -> None:
    size = min(size, bots)
    strengths = {f"b{i:02}": spread * i for i in range(bots)}
    sim = Sim(strengths, certain=frozenset(list(strengths)[:certain]), table_size=size,
              concurrency=concurrency, seed=seed)
    tables = sim.run(1500)
    w, most = window(bots, size), cap(bots, size)
    assert most <= 2 * w * size / bots  # twice a fair share of W tables, at most
    assert max(max_share(tables, w).values()) <= most
    # And none is left out: no bot waits 4 windows for a table.
    assert set(_counts(tables)) == set(strengths)
    assert max(_gaps(tables).values()) <= 4 * w
