"""The one error of a declaration: :class:`FieldError`, naming the field's path.

A path is written as the documentation writes fields: keys joined by dots, list
positions in brackets (``format.stages[1].name``, ``participants[0].command``). The
message is ``"<path>: <problem>"``, or the problem alone for an error of the whole
declaration (a file that cannot be read).

Standard library only: :mod:`..texts` raises it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: One step of a path: a key, or a position in a list.
Step = str | int
#: A field's path, as a text already written or as its steps.
Where = str | Sequence[Step]

#: A message that starts with a path (``name: ...``, ``format.stages[1].rounds: ...``).
_LEADING_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*"
                           r"(?:\[\d+\])*)*): ")


def at(*steps: Step) -> str:
    """The path of ``steps`` as messages write it: ``at("format", "stages", 1, "name")``
    is ``format.stages[1].name``. A text step is written as it is (it may itself be a
    path: ``at("participants[0]", "token")``)."""
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step:
            out += f".{step}" if out else step
    return out


class FieldError(ValueError):
    """A declaration field that cannot be used: ``field`` is its path (empty for the
    declaration as a whole), ``problem`` says why, quoting at most a clip of the value
    (:func:`..texts.clip`).

    ``FieldError(where, problem)``: ``where`` a path's text or its steps; ``file``: the
    file the field is in, when the message must name it (``bot.toml``), written first.
    ``FieldError(message)``: a message already written whole; its leading path, if it
    starts with one, is its ``field``."""

    def __init__(self, where: Where, problem: str | None = None, *,
                 file: str | None = None) -> None:
        if problem is None:
            message = str(where)
            lead = _LEADING_PATH.match(message)
            field, problem = (lead.group(1), message[lead.end():]) if lead else ("", message)
        else:
            field = where if isinstance(where, str) else at(*where)
            message = f"{field}: {problem}" if field else problem
        if file is not None:
            message = f"{file}: {message}"
        super().__init__(message)
        self.field, self.problem, self.file = field, problem, file

    def under(self, *steps: Step) -> FieldError:
        """The same error, its field inside ``steps`` (a limit of a participant's own
        ``sandbox`` table: ``sandbox.memory_mb`` under ``participants[3]``)."""
        return FieldError(at(*steps, self.field), self.problem, file=self.file)
