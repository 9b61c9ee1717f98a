"""One address for a step of a recorded game: its number, from 1.

Step N is the record's action at index N - 1 (``GameRecord.actions``): step 1 is the
first deal. It is the number the replay viewer's step counter shows, the N of the web
view's ``/api/g/GAME/step/N`` and the step ``chinchon replay`` prints. A record's
incident (``GameRecord.incidents``) names by its ``step`` the index of the move that
settled its decision: it belongs to that move's step."""

from __future__ import annotations

from typing import Any


def step_of_index(index: int) -> int:
    """The step number of the record's action at ``index``."""
    return index + 1


def index_of_step(step: int) -> int:
    """The index in the record's actions of step ``step`` (1 or more)."""
    if step < 1:
        raise ValueError(f"steps are numbered from 1, got {step}")
    return step - 1


def incident_step(note: dict[str, Any]) -> int:
    """The step an incident of the record belongs to: the step of the move that
    settled its decision (the bot's accepted answer, or the default played for it)."""
    index = note.get("step", 0)
    return step_of_index(index if isinstance(index, int) else 0)
