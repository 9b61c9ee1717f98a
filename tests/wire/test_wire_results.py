"""Results and record terms on the wire (chinchon.wire.results) agree with protobuf's own
JSON mapping: the referee builds them from types, without going through json_format."""

from __future__ import annotations

import pytest
from chinchon.engine import GameEnd, Outcome, RecordError, Termination
from chinchon.v1 import game_pb2 as g
from chinchon.wire import duration, outcome_from_wire, outcome_to_wire, terms_json
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

seconds = st.one_of(
    st.sampled_from([0.0, 0.001, 0.5, 1.0, 1.25, 5.0, 10.5, 300.0]),
    st.floats(min_value=0, max_value=3600, allow_nan=False),
)
counts = st.integers(min_value=0, max_value=1000)


@given(seconds, seconds, counts, counts, seconds)
def test_terms_are_the_json_mapping_of_time_control_and_policies(
    per_move: float, bank: float, retries: int, strikes: int, grace: float,
) -> None:
    want = {
        "timeControl": json_format.MessageToDict(
            g.TimeControl(per_move=duration(per_move), bank=duration(bank))),
        "policies": json_format.MessageToDict(
            g.Policies(max_illegal_retries=retries, max_strikes=strikes,
                       reconnect_grace=duration(grace))),
    }
    assert terms_json(per_move, bank, retries, strikes, grace) == want


seats = st.lists(st.integers(min_value=0, max_value=5), max_size=4).map(tuple)
outcomes = st.builds(
    Outcome,
    termination=st.sampled_from(list(Termination)),
    end=st.none() | st.sampled_from(list(GameEnd)),
    winners=seats,
    totals=st.lists(st.integers(min_value=-100, max_value=200), max_size=4).map(tuple),
    hands_played=st.integers(min_value=0, max_value=500),
    summary=st.text(max_size=40),
    forfeited=st.none() | st.integers(min_value=0, max_value=3),
)


@given(outcomes)
def test_an_outcome_on_the_wire_is_its_json_mapping_and_reads_back(o: Outcome) -> None:
    msg = outcome_to_wire(o)
    assert msg == json_format.ParseDict(o.to_json(), g.GameResult())
    assert outcome_from_wire(msg) == o
    assert Outcome.from_json(o.to_json()) == o


@pytest.mark.parametrize("bad", [
    None, [], {"termination": "TERMINATION_BOGUS"}, {"termination": "TERMINATION_NORMAL",
                                                    "winners": ["x"]},
])
def test_a_malformed_result_is_a_record_error(bad: object) -> None:
    with pytest.raises(RecordError):
        Outcome.from_json(bad)
