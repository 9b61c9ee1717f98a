"""The referee's metrics for whoever operates it, counted in the process that plays.

Plain counters and fixed-bucket histograms, process-wide (``METRICS``), written where
things happen: a decision's time once per answer (one bisect and three additions on the
hot path, nothing else), an illegal answer, a timeout, a forfeit and a finished game in
the referee, each store write in the store-writer thread. Gauges (games running,
streams per state) are callbacks read when the counts are published.

Nothing here is served: with ``chinchon serve --metrics`` the referee copies these
counts once a second into prometheus_client's multiprocess files
(:mod:`.service.metrics_files`) and a process of its own serves them
(:mod:`.service.metrics_process`; docs/metrics.md). Counting stays here, in plain
integers, because prometheus_client's own metrics take a lock and write a memory map on
every increment: several times the cost of this histogram's bisect per decision
(docs/metrics.md#what-it-costs).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

#: Decision time buckets (seconds): from a fast bot's answer to a slow one's clock.
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Store write buckets (seconds): SQLite's fsync to a remote PostgreSQL.
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)

#: A gauge's samples: (labels, value).
Samples = Iterable[tuple[Mapping[str, str], float]]


class Histogram:
    """Counts by bucket (the last: above every bound), their sum and count."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1


@dataclass
class Metrics:
    """The counters; every field is written by one thread only."""

    decision_seconds: Histogram = field(default_factory=lambda: Histogram(DECISION_BUCKETS))
    illegal_answers: int = 0
    timeouts: int = 0
    #: By termination (e.g. ``forfeit_timeout``).
    forfeits: dict[str, int] = field(default_factory=dict)
    #: By termination (``normal``, ``chinchon``, a forfeit, ``aborted``...).
    games_finished: dict[str, int] = field(default_factory=dict)
    store_seconds: Histogram = field(default_factory=lambda: Histogram(STORE_BUCKETS))
    #: Gauges read at each publication: name -> (help, samples).
    gauges: dict[str, tuple[str, Callable[[], Samples]]] = field(default_factory=dict)
    #: Labels of every series (``process`` in shared mode).
    labels: dict[str, str] = field(default_factory=dict)

    def finished(self, termination: str) -> None:
        self.games_finished[termination] = self.games_finished.get(termination, 0) + 1

    def forfeited(self, termination: str) -> None:
        self.forfeits[termination] = self.forfeits.get(termination, 0) + 1


#: The process's metrics.
METRICS = Metrics()
