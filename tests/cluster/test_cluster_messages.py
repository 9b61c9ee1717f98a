"""The bus's messages between the processes sharing a database (cluster/messages.py):
one codec, typed both ways, and refusing what is not a message."""

from __future__ import annotations

import json

import pytest
from chinchon.engine import GreedyBot, Outcome, RandomBot, RuleSet, play_game
from chinchon_referee.cluster.messages import BusEvent, Kind, Message, decode, encode
from chinchon_referee.vocabulary import TournamentStatus
from hypothesis import given
from hypothesis import strategies as st

texts = st.text(max_size=40)


def _outcome(seed: str) -> Outcome:
    rules = RuleSet(score_limit=30)
    _, record = play_game(rules, [GreedyBot(), RandomBot(1)], seed, "g", ["a", "b"])
    return Outcome.from_json(record["result"])


outcomes = st.sampled_from([_outcome(s) for s in ("1", "2", "3")])
events = st.builds(BusEvent, texts, texts, texts, st.none() | st.sampled_from(list(TournamentStatus)),
                   st.none() | outcomes, st.lists(texts, max_size=4).map(tuple),
                   st.floats(0, 2e9, allow_nan=False))


@given(st.text(min_size=1, max_size=20), st.sampled_from(list(Kind)), events,
       st.integers(0, 1000))
def test_every_message_decodes_to_itself(owner: str, kind: Kind, event: BusEvent,
                                         voided: int) -> None:
    msg = Message(owner, kind, event if kind is Kind.EVENT else None, voided)
    assert decode(encode(msg)) == msg


def test_an_event_message_carries_its_event_and_only_it_does() -> None:
    with pytest.raises(ValueError):
        Message("h", Kind.EVENT)
    with pytest.raises(ValueError):
        Message("h", Kind.BOTS, BusEvent("t", "m"))


def test_the_wire_keys_stay_as_older_processes_read_them() -> None:
    ev = BusEvent("t-1", "game g ended", "g", TournamentStatus.RUNNING, None, ("a", "b"), 12.5)
    assert json.loads(encode(Message("host:1:ab", Kind.EVENT, ev))) == {
        "o": "host:1:ab", "k": "event", "t": "t-1", "m": "game g ended", "g": "g", "ts": 12.5,
        "p": ["a", "b"], "s": TournamentStatus.RUNNING.value, "r": None}
    assert json.loads(encode(Message("h", Kind.VOIDED, voided=3))) == {"o": "h", "k": "voided", "n": 3}


@pytest.mark.parametrize("payload", ["", "[]", "{}", '{"o": "x", "k": "nonsense"}',
                                     '{"k": "event", "o": "x"}', '{"o": "x", "k": "event", "t": 1}'])
def test_what_is_not_a_message_is_refused_with_value_error(payload: str) -> None:
    with pytest.raises(ValueError):
        decode(payload)
