"""Absences (postpone or forfeit the games of absent tournament bots), as properties."""

from __future__ import annotations

from chinchon_referee.director.absence import Absences, Presence
from hypothesis import given
from hypothesis import strategies as st

BOTS = ["a", "b", "c", "d"]
events = st.lists(st.tuples(st.sampled_from(BOTS), st.floats(0, 1000)), max_size=8)


@given(events, st.floats(0, 600), st.lists(st.sampled_from(BOTS), min_size=2, max_size=3,
                                           unique=True), st.floats(0, 2000))
def test_a_game_forfeits_only_past_the_limit_and_waits_while_a_bot_is_absent(
    marks: list[tuple[str, float]], limit: float, players: list[str], now: float,
) -> None:
    ab = Absences(limit)
    first: dict[str, float] = {}
    for bot, t in sorted(marks, key=lambda m: m[1]):
        ab.mark([bot], t)
        first.setdefault(bot, t)  # absent since its first miss, not its last
    p = ab.presence(players, now)
    over = [b for b in players if b in first and now - first[b] >= limit]
    if over:
        assert p is Presence.FORFEIT
    elif any(b in first for b in players):
        assert p is Presence.POSTPONE
    else:
        assert p is Presence.PLAY
    assert ab.missing(players) == [i for i, b in enumerate(players) if b in first]


@given(events, st.sets(st.sampled_from(BOTS)))
def test_a_bot_that_connects_again_is_absent_no_more(
    marks: list[tuple[str, float]], back: set[str],
) -> None:
    ab = Absences(10.0)
    for bot, t in marks:
        ab.mark([bot], t)
    was = set(ab.since)
    assert set(ab.returned(lambda b: b in back)) == was & back
    assert set(ab.since) == was - back
    assert all(ab.presence([b, "zz"], 1e9) is Presence.PLAY for b in back)
