"""The checks every declaration shares: a value's type (whole number, number, duration,
switch, text, list, choice, a command's list of strings), a table's fields, and the
bounds common to tournaments and ladders. Each takes the field's path and refuses a bad
value with a :class:`~.errors.FieldError` naming it, quoting at most a clip of the value
(:func:`..texts.shown`).

Names, bot names and tokens are :mod:`..texts`'s (its errors are FieldErrors too).
"""

from __future__ import annotations

import datetime as dt
import enum
import math
from collections.abc import Collection, Mapping
from typing import Any, TypeVar

from ..texts import shown
from .errors import FieldError, Where, at

#: Most games played at once by a tournament or a ladder, and copies of a bot's command
#: launched for one (``instances``): each is a stream, and often a process.
MAX_CONCURRENCY = 64
#: Longest clock or grace accepted (one day): anything longer is a typo, and a timer of
#: NaN, infinity or 1e300 seconds would never fire (or overflow).
MAX_SECONDS = 86_400.0

E = TypeVar("E", bound=enum.Enum)


def _path(where: Where) -> str:
    return where if isinstance(where, str) else at(*where)


def whole(v: object, where: Where) -> int:
    """``v`` if it is a whole number (not a bool)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(where, f"must be a whole number, got {shown(v)}")
    return v


def number(v: object, where: Where) -> float:
    """``v`` as a float if it is a number (not a bool; finite or not: the field's own
    bound says)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise FieldError(where, f"must be a number, got {shown(v)}")
    return float(v)


def switch(v: object, where: Where) -> bool:
    """``v`` if it is true or false."""
    if not isinstance(v, bool):
        raise FieldError(where, f"must be true or false, got {shown(v)}")
    return v


def text(v: object, where: Where) -> str:
    """``v`` if it is a string (its rule, if any, is checked where it is used)."""
    if not isinstance(v, str):
        raise FieldError(where, f"must be a string, got {shown(v)}")
    return v


def items(v: object, where: Where) -> list[Any]:
    """``v`` if it is a list."""
    if not isinstance(v, list):
        raise FieldError(where, f"must be a list, got {shown(v)}")
    return v


def choice(kind: type[E], v: object, where: Where) -> E:
    """The member of ``kind`` whose value is the string ``v``."""
    try:
        return kind(text(v, where))
    except ValueError:
        raise FieldError(where, f"{shown(v)} is not one of "
                         f"{', '.join(str(m.value) for m in kind)}") from None


def command(v: object, where: Where) -> tuple[str, ...]:
    """A bot's command: a list of strings, or one string split at its spaces."""
    if isinstance(v, str):
        v = v.split()
    if not isinstance(v, list) or not all(isinstance(c, str) for c in v):
        raise FieldError(where, "a list of strings (or one string)")
    return tuple(v)


def in_range(v: int, low: int, high: int, where: Where) -> int:
    """``v`` if ``low <= v <= high``."""
    if not low <= v <= high:
        raise FieldError(where, f"{low} to {high}, got {v}")
    return v


def known(d: Mapping[str, Any], fields: Collection[str], where: Where = "",
          listed: bool = True) -> None:
    """Refuse the first field of ``d`` (a table at ``where``) that is not one of
    ``fields``, listing them if ``listed``."""
    unknown = sorted(set(d) - set(fields))
    if unknown:
        tail = f"; the fields are {', '.join(sorted(fields))}" if listed else ""
        raise FieldError(at(_path(where), unknown[0]), f"unknown field{tail}")


def numbers(data: Mapping[str, Any], name: str, kinds: Mapping[str, type]) -> dict[str, Any]:
    """The ``[name]`` table of ``data`` (``time_control``, ``policies``), each value
    checked to be a number of its kind (int: a whole number; float: any number, finite
    or not, which the settings themselves check)."""
    d = data.get(name) or {}
    if not isinstance(d, dict):
        raise FieldError(name, f"must be a table of {', '.join(kinds)}")
    out: dict[str, Any] = {}
    for key, v in d.items():
        kind = kinds.get(key)
        if kind is None:
            raise FieldError((name, key), f"unknown field; the fields are {', '.join(kinds)}")
        out[key] = whole(v, (name, key)) if kind is int else number(v, (name, key))
    return out


def seconds(v: object, where: Where, *, positive: bool) -> float:
    """``v`` if it is a finite number of seconds, not negative (above 0 if
    ``positive``), at most :data:`MAX_SECONDS`."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise FieldError(where, f"must be a number of seconds, got {shown(v)}")
    if not math.isfinite(v):
        raise FieldError(where, f"must be a finite number of seconds, got {v}")
    if positive and not v > 0:
        raise FieldError(where, f"must be positive, got {v}")
    if v < 0:
        raise FieldError(where, f"cannot be negative, got {v}")
    if v > MAX_SECONDS:
        raise FieldError(where, f"at most {MAX_SECONDS:g} s (one day), got {v:g}")
    return float(v)


def utc(t: dt.datetime) -> dt.datetime:
    """``t`` in UTC (a time that names no zone is taken as UTC)."""
    return t.astimezone(dt.UTC) if t.tzinfo else t.replace(tzinfo=dt.UTC)


def iso_time(v: str) -> dt.datetime | None:
    """The moment an ISO 8601 text names, in UTC; None if it names none."""
    try:
        return utc(dt.datetime.fromisoformat(v))
    except ValueError:
        return None
