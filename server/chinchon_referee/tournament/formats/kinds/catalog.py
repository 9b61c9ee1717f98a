"""Every format kind, registered: importing this module imports each kind's module,
whose ``@register`` puts its class in :mod:`.registry`. A new kind's module is added
here, and nowhere else."""

from __future__ import annotations

from . import double_elimination, gauntlet, knockout, round_robin, swiss
from .registry import known

#: The kinds' modules (importing them registered their classes).
MODULES = (round_robin, gauntlet, swiss, knockout, double_elimination)

__all__ = ["MODULES", "known"]
