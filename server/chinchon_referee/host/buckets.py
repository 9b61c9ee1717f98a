"""A token bucket: the rate bound the referee's HTTP servers (the web view's guard, the
metrics process) keep per client and in all."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``burst``."""

    rate: float
    burst: float
    tokens: float
    at: float

    def take(self, now: float) -> float:
        """0 if a token was taken, else the seconds until one is there."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate
