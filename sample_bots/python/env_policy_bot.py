"""Sample bot: a linear policy trained in the training environment (chinchon.env), played
on a referee through the SDK unchanged.

    pip install './client_sdk[env]'
    python sample_bots/python/train_env.py                      # writes env_policy.json
    CHINCHON_TOKEN=$(cat my.token) python -m chinchon.sdk --target HOST:PORT \\
        --bot sample_bots/python/env_policy_bot.py:Policy

The policy reads the environment's observation array (chinchon.env.encode) and scores
each action of the fixed space by a few features of it, weighted; it plays the best
scored legal action. ``CHINCHON_POLICY`` names the weights' file (default:
env_policy.json beside this file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from chinchon.engine import Action, Observation
from chinchon.env import Layout, action_of, observe
from chinchon.env.actions import (
    CLOSE_BASE,
    DISCARD_BASE,
    DRAW_DISCARD_INDEX,
    DRAW_STOCK_INDEX,
    LAYDOWN_BEST_INDEX,
    LAYOFF_BEST_INDEX,
    N_ACTIONS,
    PASS_INDEX,
)

FEATURES = ("draw_stock", "draw_discard", "top_pairs", "top_neighbours", "discard",
            "discard_points", "discard_pairs", "discard_neighbours", "close", "pass",
            "layoff_best", "laydown_best")
DEFAULT_FILE = Path(__file__).with_name("env_policy.json")
_DISCARDS = slice(DISCARD_BASE, DISCARD_BASE + 50)
_CLOSES = slice(CLOSE_BASE, CLOSE_BASE + 50)


def _links(hand: np.ndarray, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of the 50 cards: how many cards of ``hand`` share its rank (pairs), and
    how many of its suit lie one or two ranks away (neighbours); 0 for the jokers."""
    grid = hand[:48].reshape(4, 12)
    pairs = np.zeros(50, dtype=np.float32)
    near = np.zeros(50, dtype=np.float32)
    c = cards[:48].reshape(4, 12)
    pairs[:48] = (np.broadcast_to(grid.sum(axis=0), (4, 12)) - grid * c).ravel()
    padded = np.pad(grid, ((0, 0), (2, 2)))
    near[:48] = (padded[:, 1:13] + padded[:, 3:15] + 0.5 * (padded[:, 0:12] + padded[:, 4:16])).ravel()
    return pairs, near


def features(x: np.ndarray, layout: Layout) -> np.ndarray:
    """The (N_ACTIONS, len(FEATURES)) feature matrix of observation array ``x``."""
    hand = x[layout.plane("hand")]
    top = x[layout.plane("pile_top")]
    pairs, near = _links(hand, hand)
    top_pairs, top_near = _links(hand, np.zeros(50, dtype=np.float32))
    points = x[layout.plane("points")] * 100 / 12
    f = np.zeros((N_ACTIONS, len(FEATURES)), dtype=np.float32)
    f[DRAW_STOCK_INDEX, 0] = 1
    f[DRAW_DISCARD_INDEX, 1] = 1
    f[DRAW_DISCARD_INDEX, 2] = float(top @ top_pairs)
    f[DRAW_DISCARD_INDEX, 3] = float(top @ top_near)
    f[_DISCARDS, 4] = 1
    f[_DISCARDS, 5] = points
    f[_DISCARDS, 6] = pairs
    f[_DISCARDS, 7] = near
    f[_CLOSES, 8] = 1
    f[PASS_INDEX, 9] = 1
    f[LAYOFF_BEST_INDEX, 10] = 1
    f[LAYDOWN_BEST_INDEX, 11] = 1
    return f


class LinearPolicy:
    """Scores = features @ weights; plays the best scored legal action, ties broken by
    its own seeded generator (all-zero weights: uniformly random over the mask)."""

    def __init__(self, weights: Sequence[float], players: int = 2, seed: int = 0) -> None:
        self.weights = np.asarray(weights, dtype=np.float32)
        if self.weights.shape != (len(FEATURES),):
            raise ValueError(f"{len(FEATURES)} weights expected, got {self.weights.shape}")
        self.layout = Layout(players)
        self.rng = np.random.default_rng(seed)

    def act(self, obs: dict[str, Any]) -> int:
        scores = features(obs["observation"], self.layout) @ self.weights
        legal = np.flatnonzero(obs["action_mask"])
        best = legal[scores[legal] >= scores[legal].max() - 1e-6]
        return int(self.rng.choice(best))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"features": list(FEATURES),
                                    "weights": [round(float(w), 4) for w in self.weights]},
                                   indent=1) + "\n")

    @classmethod
    def load(cls, path: Path, players: int = 2) -> LinearPolicy:
        data = json.loads(path.read_text())
        if data.get("features") != list(FEATURES):
            raise ValueError(f"{path}: not weights of these features")
        return cls(data["weights"], players)


class Policy:
    """The SDK bot: ``choose(obs, legal)`` through the environment's own observe()."""

    name = "env-policy"

    def __init__(self) -> None:
        self.path = Path(os.environ.get("CHINCHON_POLICY") or DEFAULT_FILE)
        self.policies: dict[int, LinearPolicy] = {}

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        n = obs.rules.players
        if n not in self.policies:
            self.policies[n] = LinearPolicy.load(self.path, n)
        return action_of(self.policies[n].act(observe(obs, legal)))
