"""The one home of declarations: its error naming the field's path, its TOML reading
(every way a file can fail said in one line) and writing (read back to the same
mapping), and the old names of its error, each the one class; and a declaration read
back from the database, which is lenient about what an organizer types (the rules of
names may have grown since it was stored) but still refuses a damaged one."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.declarations import toml
from chinchon_referee.declarations.errors import FieldError, at
from chinchon_referee.ladder.spec import LadderError, LadderSpec
from chinchon_referee.ladder.spec import declared as declared_ladder
from chinchon_referee.launch.declaration import DeclarationError
from chinchon_referee.launch.limits import LimitError, Limits
from chinchon_referee.launch.manifest import ManifestError
from chinchon_referee.texts import TextError
from chinchon_referee.tournament.formats.spec import FormatError
from chinchon_referee.tournament.model import SpecError, TournamentSpec, declared
from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_error_names_the_fields_path() -> None:
    assert at("format", "stages", 1, "name") == "format.stages[1].name"
    e = FieldError(("participants", 0, "command"), "a list of strings")
    assert str(e) == "participants[0].command: a list of strings"
    assert (e.field, e.problem) == ("participants[0].command", "a list of strings")
    assert str(FieldError("", "cannot read x.toml: No such file")) == "cannot read x.toml: No such file"
    whole = FieldError("format.stages[2].rounds: 1 to 7 for 8 bots, got 9")
    assert (whole.field, whole.problem) == ("format.stages[2].rounds", "1 to 7 for 8 bots, got 9")
    inner = FieldError(("sandbox", "memory_mb"), "between 16 and 65536, got 1")
    assert str(inner.under("participants[3] (bob)")) == (
        "participants[3] (bob).sandbox.memory_mb: between 16 and 65536, got 1")
    assert str(FieldError("name", "1 to 32 letters", file="bot/bot.toml")) == (
        "bot/bot.toml: name: 1 to 32 letters")


def test_the_old_names_are_the_one_class() -> None:
    """Whoever catches one of the old names catches every declaration error: a sandbox
    limit of a tournament's participant is a SpecError, with nothing re-raised."""
    for old in (SpecError, LadderError, FormatError, LimitError, DeclarationError,
                ManifestError, TextError):
        assert old is FieldError
    with pytest.raises(SpecError, match=r"^sandbox\.memory_mb: between 16 and"):
        Limits().over({"memory_mb": 1})


@pytest.mark.parametrize(("content", "says"), [
    ('name = "cup"\nseed = \n', "not valid TOML: Invalid value (at line 2, column 8)"),
    ('name = "caf\u00e9"\n'.encode("latin-1"), "not UTF-8 text (byte 11); save it as UTF-8"),
    (b"name = " + b"[" * 5000 + b"]" * 5000 + b"\n", "its values are nested too deep"),
])
def test_a_file_that_cannot_be_read_is_said_in_one_line(
    tmp_path: Path, content: str | bytes, says: str,
) -> None:
    f = tmp_path / "d.toml"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(FieldError) as e:
        toml.read(f)
    assert str(e.value).startswith(f"{f}: ") and says in str(e.value), str(e.value)
    with pytest.raises(FieldError, match=r"cannot read .*: No such file"):
        toml.read(tmp_path / "none.toml")
    with pytest.raises(FieldError, match=r"^no bot\.toml here$"):
        toml.read(tmp_path / "none.toml", missing="no bot.toml here")


KEYS = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
SCALARS = (st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=20)
           | st.floats(allow_nan=False))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, VALUES | st.dictionaries(KEYS, VALUES, max_size=3)
                       | st.lists(st.dictionaries(KEYS, VALUES, max_size=3), max_size=3),
                       max_size=6))
def test_what_is_written_reads_back_the_same(d: dict[str, Any]) -> None:
    assert toml.loads(toml.dumps(d)) == d


def test_inf_reads_back() -> None:
    back = toml.loads(toml.dumps({"per_move": math.inf, "bank": -math.inf}))
    assert back == {"per_move": math.inf, "bank": -math.inf}


def old_tournament() -> dict[str, Any]:
    """A tournament as the database kept it when the name rules were looser: a name
    ending in a space, a line separator in another, two stages of one name."""
    return {"name": "Friday cup ", "participants": [{"name": "alice"}, {"name": "bob"}],
            "seed": "s", "format": {"stages": [
                {"kind": "round_robin", "name": "Pool\u2028A", "advance": 2},
                {"kind": "round_robin", "name": "Pool\u2028A"}]}}


def test_a_stored_tournament_is_read_under_the_rules_it_was_declared_by() -> None:
    spec = declared(old_tournament())
    assert spec.name == "Friday cup " and [s.name for s in spec.format.stages] == [
        "Pool\u2028A", "Pool\u2028A"]
    # The door an organizer types at is as strict as ever.
    with pytest.raises(SpecError, match=r"^name: no space at its beginning or its end"):
        TournamentSpec.from_dict(old_tournament())
    assert declared(spec.to_dict()) == spec  # what it writes it reads again


def test_a_stored_ladder_is_read_under_the_rules_it_was_declared_by() -> None:
    long_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3 * 365)).isoformat()
    old = {"name": " Winter ladder", "opens": long_ago, "entrants": [{"name": "alice"}]}
    spec = declared_ladder(old)
    assert spec.name == " Winter ladder" and spec.opens is not None
    with pytest.raises(LadderError, match=r"^name: no space at its beginning or its end"):
        LadderSpec.from_dict(old)
    with pytest.raises(LadderError, match=r"^opens: a moment within 731 days of now"):
        LadderSpec.from_dict({**old, "name": "Winter ladder"})
    assert declared_ladder(spec.to_dict()) == spec


@pytest.mark.parametrize(("stored", "says"), [
    ({"name": "cup", "participants": [{"name": "alice"}]}, "participants: at least 2 bots"),
    ({"name": "cup", "participants": "alice"}, "participants: must be a list"),
    ({**old_tournament(), "participants": [{"name": "../x"}, {"name": "bob"}]},
     "participants[0].name: a bot name is"),
    ({**old_tournament(), "table_size": "2"}, "table_size: must be a whole number"),
    ({**old_tournament(), "format": {"stages": [{"kind": "chess"}]}},
     "format.stages[0].kind: 'chess' is not one of"),
    ({"name": "cup", "participants": [None, None]}, "participants[0]: needs a name"),
])
def test_a_damaged_stored_tournament_is_still_refused(stored: dict[str, Any], says: str) -> None:
    with pytest.raises(SpecError) as e:
        declared(stored)
    assert str(e.value).startswith(says), str(e.value)


@pytest.mark.parametrize(("stored", "says"), [
    ({"name": 5}, "name: must be a string"),
    ({"name": "l", "entrants": [{"name": "-rf"}]}, "entrants[0].name: a bot name is"),
    ({"name": "l", "opens": "2026-01-01", "closes": "2025-01-01"}, "closes: "),
    (["not", "a", "table"], "a ladder declaration is a table of fields"),
])
def test_a_damaged_stored_ladder_is_still_refused(stored: Any, says: str) -> None:
    with pytest.raises(LadderError) as e:
        declared_ladder(stored)
    assert str(e.value).startswith(says), str(e.value)
