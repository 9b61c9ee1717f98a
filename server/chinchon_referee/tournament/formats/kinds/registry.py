"""The registry of format kinds: each declared name (:class:`..spec.Kind`) and its one
:class:`.base.FormatKind`. A kind's module registers its class (``@register``);
:mod:`.catalog` imports every kind's module, so importing it fills the registry (the
stage chain, :mod:`..chain`, does: every road to a kind passes through it).

Adding a format: its name in ``Kind``, its module in ``kinds/`` (one class, the whole
interface), its import in ``kinds/catalog.py``. Nothing else switches on a kind.
"""

from __future__ import annotations

from typing import TypeVar

from ...tiebreaks import Tiebreak
from ..spec import Kind, Stage
from .base import FormatKind

_KINDS: dict[Kind, FormatKind] = {}

K = TypeVar("K", bound=type[FormatKind])


def register(cls: K) -> K:
    """Class decorator: ``cls`` is the kind of its ``kind`` name."""
    if cls.kind in _KINDS:
        raise ValueError(f"format kind {cls.kind.value} is registered twice")
    _KINDS[cls.kind] = cls()
    return cls


def kind_of(stage: Stage) -> FormatKind:
    """The kind a stage is played as."""
    return _KINDS[stage.kind]


def known() -> dict[Kind, FormatKind]:
    """Every registered kind, by name."""
    return dict(_KINDS)


def order_of(stage: Stage) -> tuple[Tiebreak, ...]:
    """The tie-break order ``stage`` ranks by (its own, or its kind's default)."""
    return kind_of(stage).order(stage)
