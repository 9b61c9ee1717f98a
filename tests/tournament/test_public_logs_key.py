"""``public_logs``: a declaration's say on who reads its launched bots' stderr lines
(web/botlogs.py). Private unless declared; checked like any field; kept in the stored
spec only when given, so a declaration without it keeps its fingerprint."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from chinchon_referee.tournament.model import SpecError, TournamentSpec

from tests.support.helpers import ADMIN
from tests.support.tournament import CLI

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


def test_admin_create_refuses_public_logs_a_server_keeps_none(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text('name = "x"\npublic_logs = true\n[[participants]]\nname = "a"\n'
                    '[[participants]]\nname = "b"\n', encoding="utf-8")
    # Refused before any call (nothing listens on port 1).
    res = subprocess.run([*CLI, "admin", "--target", "127.0.0.1:1", "create", str(toml)],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "CHINCHON_ADMIN_TOKEN": ADMIN})
    assert res.returncode == 2 and "public_logs: only 'chinchon tournament run'" in res.stderr
