"""A declaration's TOML: read from a file or a text, each way that can fail refused in
one line (:class:`~.errors.FieldError`, never a traceback), and written back.

Reading: a file that cannot be opened, that is not UTF-8, that is not TOML (tomllib's
message says the line and the column) or whose values are nested past Python's
recursion limit.

Writing (:func:`dumps`, the one writer of the tournament's and the ladder's
declarations): the top-level values that are not tables first, then each table as
``[key]``, then each list of tables as ``[[key]]`` tables, every group in the mapping's
order; a table inside a table or a list is an inline table (a format's stages), an
empty list ``key = []``. The text reads back (:func:`loads`) to an equal mapping.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from .errors import FieldError


def loads(text: str, where: str = "the declaration") -> dict[str, Any]:
    """The mapping of TOML ``text``; FieldError saying why not, ``where`` naming the text
    (a file's name)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FieldError("", f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise FieldError("", f"{where}: not a declaration: its values are nested too "
                         "deep") from None


def read(path: str | Path, missing: str | None = None) -> dict[str, Any]:
    """The mapping of the TOML file ``path``; FieldError saying why it cannot be read
    (``missing``: the message when there is no such file, else it is said as any other
    failure to open it)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise FieldError("", missing or f"cannot read {p}: {e.strerror}") from None
    except OSError as e:
        raise FieldError("", f"cannot read {p}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise FieldError("", f"{p}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    return loads(text, str(p))


def value(v: Any) -> str:
    """``v`` (a bool, a number, a text, a list, a table) as a TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)  # Python's int and float spellings (inf and nan too) are TOML's
    if isinstance(v, str):
        # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):  # an inline table
        return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML spelling for {type(v).__name__}")


def _tables(v: Any) -> bool:
    """A list of tables (written ``[[key]]``)."""
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dumps(d: dict[str, Any]) -> str:
    """``d`` as a declaration's TOML text (the module's layout)."""
    lines = [f"{k} = {value(v)}" for k, v in d.items()
             if not isinstance(v, dict) and not _tables(v)]
    for k, v in d.items():
        if isinstance(v, dict):
            lines += ["", f"[{k}]", *(f"{kk} = {value(vv)}" for kk, vv in v.items())]
    for k, v in d.items():
        if _tables(v):
            for item in v:
                lines += ["", f"[[{k}]]", *(f"{kk} = {value(vv)}" for kk, vv in item.items())]
    return "\n".join(lines) + "\n"
