"""``public_logs``: a declaration's say on who reads its launched bots' stderr lines
(web/botlogs.py). Private unless declared; checked like any field; kept in the stored
spec only when given, so a declaration without it keeps its fingerprint."""

from __future__ import annotations

import pytest
from chinchon_referee.tournament.model import SpecError, TournamentSpec

BASE = {"name": "Logs", "participants": ["a", "b"]}


def test_logs_are_private_unless_declared_public() -> None:
    spec = TournamentSpec.from_dict(dict(BASE))
    assert spec.public_logs is False and "public_logs" not in spec.to_dict()
    public = TournamentSpec.from_dict({**BASE, "public_logs": True})
    assert public.public_logs is True and public.to_dict()["public_logs"] is True
    assert TournamentSpec.from_dict(public.to_dict()) == public
    assert TournamentSpec.from_dict({**BASE, "public_logs": False}).fingerprint() == spec.fingerprint()


@pytest.mark.parametrize("bad", ["yes", 1, "true"])
def test_a_public_logs_that_is_not_a_boolean_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(SpecError, match=r"^public_logs: must be true or false"):
        TournamentSpec.from_dict({**BASE, "public_logs": bad})
