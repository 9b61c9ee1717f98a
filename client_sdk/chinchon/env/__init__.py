"""Chinchón as a training environment: PettingZoo's AEC API (Farama), observations as
numpy arrays, an action mask over a fixed action space. An optional extra of the SDK::

    pip install './client_sdk[env]'      # pettingzoo, gymnasium, numpy

:func:`env` / :func:`raw_env` make the environment (:mod:`chinchon.env.pettingzoo`);
:mod:`chinchon.env.actions` is the action space; :mod:`chinchon.env.encode` the
observation's layout. :func:`observe` turns what a bot gets from the referee
(``obs, legal``) into the very dict the environment gives an agent, so a policy trained
here plays on a referee through the SDK unchanged (docs/env.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import numpy as np

    from .pettingzoo import ChinchonEnv, env, raw_env
except ImportError as e:  # pragma: no cover - depends on what is installed
    raise ImportError(
        f"chinchon.env needs the SDK's 'env' extra ({e.name} is missing): "
        "pip install 'chinchon-sdk[env]' (from a checkout: pip install './client_sdk[env]')"
    ) from e

from chinchon.engine import Action, Observation

from .actions import N_ACTIONS, action_of, index_of, legal_indices
from .encode import Layout, encode


def observe(obs: Observation, legal: Sequence[Action]) -> dict[str, Any]:
    """The environment's observation dict for a bot's ``choose(obs, legal)``: the array of
    ``obs`` and the mask of ``legal``."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[legal_indices(legal)] = 1
    return {"observation": encode(obs), "action_mask": mask}


__all__ = [
    "N_ACTIONS", "ChinchonEnv", "Layout", "action_of", "encode", "env", "index_of",
    "legal_indices", "observe", "raw_env",
]
