"""The order in which the suite's files are handed to pytest-xdist's workers.

With ``--dist loadfile`` each file runs whole in one worker, and the scheduler hands the
files out in their order in the collection (``--no-loadscope-reorder``; by default xdist
sorts them by their number of tests, which put the few-test, slowest files last, where
one of them alone set the suite's wall time). The slowest files come first here, longest
first, so that they start at once on the workers and the short files fill in around them;
the others follow, most tests first, as xdist ordered them. Figures: docs/testing.md."""

from __future__ import annotations

from collections import Counter

import pytest

#: The slowest files, longest first (seconds in one worker, 2026-12-03, whole suite at
#: rest). The walkthrough waits for the C++ build (started in the background at a
#: worker's first test, ~35-60 s): handed out fourth, when a worker is free, the build
#: is done or nearly, and its worker has played other files meanwhile.
SLOWEST = (
    "tests/cluster/test_shared_processes.py",      # 128 s
    "tests/web/test_web_api.py",                   # 105 s
    "tests/web/test_web_spectator.py",             # 94 s
    "tests/docs/test_walkthrough.py",              # 25 s once the C++ bot is built
    "tests/web/test_web_browser.py",               # 67 s
    "tests/cli/test_admin_cli.py",                 # 66 s
    "tests/bench/test_bench_spectator.py",         # 65 s
    "tests/web/test_web_secrecy.py",               # 62 s
    "tests/cli/test_tournament_cli.py",            # 42 s
    "tests/storage/test_store_integrity.py",       # 41 s
    "tests/bench/test_bench_shared.py",            # 40 s
    "tests/cli/test_secrets.py",                   # 36 s
    "tests/bench/test_bench_sandbox.py",           # 35 s
    "tests/engine/test_engine_properties.py",      # 31 s
    "tests/referee/test_exhaustion.py",            # 27 s
)


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def slowest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: files in the order above, then by number of tests;
    the tests of one file keep their order."""
    sizes = Counter(file_of(item) for item in items)
    rank = {name: i for i, name in enumerate(SLOWEST)}

    def key(item: pytest.Item) -> tuple[int, int, str]:
        name = file_of(item)
        return (rank.get(name, len(SLOWEST)), -sizes[name], name)

    items.sort(key=key)
