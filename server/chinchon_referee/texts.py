"""What an organizer types: the one rule for names, the one rule for tokens, and the
clip that quotes a bad value in an error.

Every door that takes a name or a token (a TOML declaration, ``CreateTournament``,
``CreateLadder``, ``EnterLadder``, ``AddBot``, ``RotateBotToken``, the command lines)
checks it here, so that each is refused alike, with a message naming the field
(``format.stages[1].name: ...``) and never quoting more than :func:`clip` of the value.
docs/security.md (*Names and tokens*) states the rules.

* **A name** (a tournament's, a stage's, a ladder's): 1 to its bound characters
  (:data:`MAX_NAME`, :data:`MAX_STAGE_NAME`); every character printable, so none of
  the Unicode categories C (controls: NUL, ESC, newline, tab...; format characters:
  the bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069, zero-width
  characters...; surrogates, private use, unassigned) nor a line or paragraph separator
  (U+2028, U+2029); no space (of any kind) at its beginning or its end.
* **A bot's name** is a name that is also an identifier: 1 to :data:`MAX_BOT_NAME` ASCII
  letters, digits, ``-``, ``_`` or ``.``, the first a letter or a digit (no look-alike
  letters of other scripts, nothing a shell or a path reads as an option or a folder).
* **A token**: :data:`MIN_TOKEN_LENGTH` to :data:`MAX_TOKEN_LENGTH` characters, each
  printable ASCII (0x20 to 0x7E: what a gRPC metadata value can carry), no space at its
  beginning or its end (a token travels as ``authorization: Bearer <token>``, read
  without them). Its messages never quote it: a token is a secret.

Pure: the standard library only (and :mod:`.declarations.errors`, whose
:class:`~.declarations.errors.FieldError` its checks raise).
"""

from __future__ import annotations

import unicodedata

from .declarations.errors import FieldError

#: Longest tournament or ladder name.
MAX_NAME = 200
#: Longest stage name (a column of the standings).
MAX_STAGE_NAME = 64
#: Longest bot name.
MAX_BOT_NAME = 64
#: Shortest and longest token an organizer may choose (generated ones are 36
#: characters). The longest is far under gRPC's 8 KB of metadata.
MIN_TOKEN_LENGTH = 16
MAX_TOKEN_LENGTH = 256
#: Most characters :func:`clip` writes of a value (its escapes counted), before the mark
#: of a cut; and the longest it returns in all, quotes and mark included.
CLIP = 40
MAX_CLIP = CLIP + 40
#: The longest problem a check here reports (its field's name comes before it).
MAX_PROBLEM = 200
#: The longest message :func:`bounded` returns: an error sent back over gRPC travels in
#: the call's trailing metadata, which holds 8 KB.
MAX_MESSAGE = 500

#: Categories of characters a name may not hold: C* (controls, format characters,
#: surrogates, private use, unassigned), line and paragraph separators.
_REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_BOT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


#: A name or a token that cannot be used: a declaration's error (``field`` names where
#: it was given, ``problem`` says why, quoting at most a clip of the value).
TextError = FieldError


def _escaped(ch: str, ascii_only: bool = False) -> str:
    if ch == "\\" or ch == "'":
        return "\\" + ch
    if ch.isprintable() and not (ascii_only and ch > "~"):
        return ch
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def clip(value: str, limit: int = CLIP, quote: str = "'", ascii_only: bool = False) -> str:
    """``value`` quoted for an error message: in single quotes, every character that
    is not printable (a control, a format character such as a bidirectional override,
    any space but the plain one) written as an escape (``\\x00``, ``\\u202e``), and
    only its first ``limit`` characters of that, followed by how long it was. At most
    :data:`MAX_CLIP` characters (for the default ``limit``), none of them a control.
    ``ascii_only``: every character beyond ASCII escaped too (where only ASCII is
    allowed, a look-alike letter of another script shows as what it is). ``quote=""``:
    no quotes, quotes and backslashes written as they are."""
    out: list[str] = []
    used = 0
    for ch in value:
        piece = (_escaped(ch, ascii_only) if quote or ascii_only or not ch.isprintable()
                 else ch)
        if used + len(piece) > limit:
            return f"{quote}{''.join(out)}{quote}… ({len(value):,} characters)"
        out.append(piece)
        used += len(piece)
    return f"{quote}{''.join(out)}{quote}"


def shown(value: object) -> str:
    """Any value a declaration held, for an error message: a text as :func:`clip`
    quotes it, anything else as Python writes it, clipped alike (a TOML list of
    100,000 numbers is not quoted whole)."""
    return clip(value) if isinstance(value, str) else clip(repr(value), quote="")


def bounded(message: str) -> str:
    """``message`` as an error may send it: every character that is not printable
    escaped, and at most :data:`MAX_MESSAGE` characters (cut, saying how long it was).
    The last guard before a message leaves the process: the checks themselves quote
    values with :func:`clip`."""
    return clip(message, MAX_MESSAGE - 30, quote="")


def _bad_character(value: str) -> str | None:
    """Why the first character a name may not hold is refused, or None."""
    for i, ch in enumerate(value):
        cat = unicodedata.category(ch)
        if cat in _REFUSED:
            what = ("a newline" if ch in "\n\r\x85" or cat in ("Zl", "Zp")
                    else "a NUL" if ch == "\x00"
                    else "a bidirectional override" if "\u202a" <= ch <= "\u202e"
                    or "\u2066" <= ch <= "\u2069"
                    else "a control character" if cat == "Cc"
                    else "an invisible format character" if cat == "Cf"
                    else "a character that is not printable")
            return f"{what} ({_escaped(ch)}) at character {i + 1}"
    return None


def name_problem(value: str, limit: int = MAX_NAME) -> str | None:
    """Why ``value`` is not a name of at most ``limit`` characters, or None."""
    if not value:
        return f"1 to {limit} printable characters, got none (a name is required)"
    if len(value) > limit:
        return f"at most {limit} characters, got {len(value):,}: {clip(value)}"
    bad = _bad_character(value)
    if bad is not None:
        return f"printable text only, got {clip(value)}: it holds {bad}"
    if value != value.strip():
        return (f"no space at its beginning or its end, got {clip(value)}"
                if value.strip() else f"a name needs a character that is not a space, got "
                f"{clip(value)}")
    return None


def check_name(value: str, field: str, limit: int = MAX_NAME) -> str:
    """``value`` if it is a name (the module's rule) of at most ``limit`` characters;
    else a :class:`TextError` naming ``field``."""
    problem = name_problem(value, limit)
    if problem is not None:
        raise TextError(field, problem)
    return value


def is_bot_name(value: str) -> bool:
    """A bot's name: 1 to :data:`MAX_BOT_NAME` ASCII letters, digits, '-', '_' or '.',
    the first a letter or a digit."""
    return (0 < len(value) <= MAX_BOT_NAME and value[0] not in "-_."
            and all(ch in _BOT_NAME_CHARS for ch in value))


#: What a bot's name is, for messages.
BOT_NAME_RULE = (f"a bot name is 1 to {MAX_BOT_NAME} ASCII letters, digits, '-', '_' or "
                 "'.', beginning with a letter or a digit")


def check_bot_name(value: str, field: str) -> str:
    """``value`` if it is a bot's name; else a :class:`TextError` naming ``field``."""
    if not is_bot_name(value):
        raise TextError(field, f"{BOT_NAME_RULE}, got {clip(value, ascii_only=True)}")
    return value


def token_problem(value: str) -> str | None:
    """Why ``value`` is not a token, or None (never quoting it)."""
    if len(value) < MIN_TOKEN_LENGTH:
        return (f"a token needs at least {MIN_TOKEN_LENGTH} characters, got {len(value)} "
                "(leave it out to have one generated)")
    if len(value) > MAX_TOKEN_LENGTH:
        return f"a token has at most {MAX_TOKEN_LENGTH} characters, got {len(value):,}"
    if not all(" " <= ch <= "~" for ch in value):
        return ("a token is printable ASCII only (0x20 to 0x7E: what gRPC metadata can "
                "carry); this one holds another character")
    if value != value.strip(" "):
        return "a token has no space at its beginning or its end"
    return None


def check_token(value: str, field: str) -> str:
    """``value`` if it is a token; else a :class:`TextError` naming ``field`` (never
    the token)."""
    problem = token_problem(value)
    if problem is not None:
        raise TextError(field, problem)
    return value
