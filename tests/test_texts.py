"""The text rules (server/chinchon_referee/texts.py), as properties over any text: a
name, a bot name or a token is accepted exactly when it meets its rule as
docs/security.md states it, and no message of a refusal is long or holds a character
that would act on a terminal (a control, a bidirectional override)."""

from __future__ import annotations

import unicodedata

import pytest
from chinchon_referee.auth import new_token
from chinchon_referee.texts import (
    MAX_BOT_NAME,
    MAX_CLIP,
    MAX_MESSAGE,
    MAX_NAME,
    MAX_PROBLEM,
    MAX_STAGE_NAME,
    MAX_TOKEN_LENGTH,
    MIN_TOKEN_LENGTH,
    TextError,
    bounded,
    check_bot_name,
    check_name,
    check_token,
    clip,
    shown,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.texts import TEXT, TRICKY


def meets_name_rule(s: str, limit: int) -> bool:
    """The rule as docs/security.md words it: 1 to ``limit`` characters, each printable
    or a space, none a space at either end."""
    return (0 < len(s) <= limit and s[0] not in " \xa0" and s == s.strip()
            and all(ch.isprintable() or unicodedata.category(ch) == "Zs" for ch in s))


def meets_token_rule(s: str) -> bool:
    return (MIN_TOKEN_LENGTH <= len(s) <= MAX_TOKEN_LENGTH
            and all(0x20 <= ord(ch) <= 0x7E for ch in s) and s[0] != " " and s[-1] != " ")


def harmless(message: str) -> bool:
    """Nothing in it acts on a terminal or reorders what follows."""
    return all(ch.isprintable() for ch in message)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from([MAX_NAME, MAX_STAGE_NAME, 5]))
@example("Friday league", MAX_NAME)
@example("Fri\x00day", MAX_NAME)
@example("Final \u202eevil", MAX_NAME)
@example("two\nlines", MAX_NAME)
@example(" padded", MAX_NAME)
@example("x" * 201, MAX_NAME)
@example("春の\u3000大会", MAX_NAME)
def test_a_name_is_accepted_exactly_when_it_meets_the_rule(s: str, limit: int) -> None:
    field = "format.stages[1].name"
    try:
        assert check_name(s, field, limit) == s
        accepted = True
    except TextError as e:
        accepted = False
        assert e.field == field and str(e).startswith(f"{field}: ")
        assert len(e.problem) <= MAX_PROBLEM and harmless(str(e)), str(e)
    assert accepted == meets_name_rule(s, limit), repr(s)


@settings(max_examples=300, deadline=None)
@given(TEXT)
@example("alpha")
@example("\u0430lpha")
@example("-rf")
@example("..")
@example("a" * (MAX_BOT_NAME + 1))
def test_a_bot_name_is_a_name_of_ascii_letters_digits_and_three_marks(s: str) -> None:
    try:
        check_bot_name(s, "participants[0].name")
        accepted = True
    except TextError as e:
        accepted = False
        assert len(e.problem) <= MAX_PROBLEM and harmless(str(e)), str(e)
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    assert accepted == (0 < len(s) <= MAX_BOT_NAME and s[0].isalnum()
                        and all(ch in allowed for ch in s)), repr(s)
    if accepted:
        assert meets_name_rule(s, MAX_BOT_NAME)  # a bot name is a name


TOKENS = (st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E),
                  min_size=MIN_TOKEN_LENGTH - 2, max_size=MAX_TOKEN_LENGTH + 2)
          | st.lists(st.one_of(TRICKY, st.characters()), min_size=10, max_size=40).map("".join))


@settings(max_examples=300, deadline=None)
@given(TOKENS)
@example("a-token-with-\x00-a-nul-inside")
@example("a-token-of-20-chars!")
@example(" a-token-with-a-space")
def test_a_token_is_accepted_exactly_when_grpc_metadata_can_carry_it(s: str) -> None:
    try:
        check_token(s, "participants[0].token")
        accepted = True
    except TextError as e:
        accepted = False
        assert len(e.problem) <= MAX_PROBLEM and harmless(str(e))
        if len(s) >= 8:
            assert s not in str(e)  # a token is a secret: never quoted
    assert accepted == meets_token_rule(s), repr(s)


def test_every_generated_token_meets_the_rule() -> None:
    for _ in range(2000):
        check_token(new_token(), "generated")


@settings(max_examples=300, deadline=None)
@given(TEXT | st.text(min_size=200, max_size=2000))
def test_a_clip_is_short_and_harmless_and_says_how_long_the_value_was(s: str) -> None:
    quoted = clip(s)
    assert len(quoted) <= MAX_CLIP and harmless(quoted)
    if len(quoted) < len(s):
        assert f"({len(s):,} characters)" in quoted
    if harmless(s) and "'" not in s and "\\" not in s and len(s) <= 40:
        assert quoted == f"'{s}'"  # a plain short value is shown as it is
    assert len(shown([s] * 20)) <= MAX_CLIP
    told = bounded("x: " + s * 3)
    assert len(told) <= MAX_MESSAGE and harmless(told)


@pytest.mark.parametrize(("value", "quoted"), [
    ("a\x00b", "'a\\x00b'"), ("\u202eevil", "'\\u202eevil'"), ("two\nlines", "'two\\x0alines'"),
    ("it's", "'it\\'s'"),
])
def test_a_clip_escapes_what_a_terminal_would_act_on(value: str, quoted: str) -> None:
    assert clip(value) == quoted
