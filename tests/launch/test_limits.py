"""A submission's own limits (its manifest's ``[limits]``) only ever lower the
organizer's: ``Limits.within`` over every field, a "0: none" included, judged by what
the limits make the sandbox enforce (prlimit's options, the cgroup's values), and a
real sandboxed bot whose manifest asks for ``cpu_seconds = 0`` under an organizer's 2.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.launch.bots import BotProcess
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.declaration import split
from chinchon_referee.launch.limits import BOUNDS, MIB, LimitError, Limits
from hypothesis import given
from hypothesis import strategies as st

from tests.support.sandbox import Place, hostile, results


def enforced(limits: Limits, memory_cgroup: bool) -> dict[str, float]:
    """What each limit lets a bot use, as the sandbox is told it (infinity: unbounded):
    the rlimits from prlimit's options, the rest as the cgroups and tmpfs take them."""
    rlimits = {}
    for arg in limits.prlimit_args(memory_cgroup):
        name, _, value = arg.removeprefix("--").partition("=")
        rlimits[name] = int(value)
    found = {
        "memory_mb": limits.memory_mb if memory_cgroup else rlimits["as"] / 2 / MIB,
        "processes": min(rlimits["nproc"], limits.processes),
        "open_files": rlimits["nofile"],
        "file_size_mb": rlimits["fsize"] / MIB,
        "tmp_mb": limits.tmp_mb,
        "cpu": limits.cpu,
        "cpu_seconds": rlimits.get("cpu", math.inf),
    }
    assert set(found) == {f.name for f in dataclasses.fields(Limits)}  # every field judged
    return found


def _value(name: str) -> st.SearchStrategy[Any]:
    low, high = BOUNDS[name]
    if name == "cpu":
        return st.floats(low, high)
    # Each bound, the zero where it is allowed, and everything between.
    return st.sampled_from([int(low), int(high)]) | st.integers(int(low), int(high))


LIMITS = st.fixed_dictionaries({}, optional={n: _value(n) for n in BOUNDS}).map(
    lambda d: Limits(**d))
ASKED = st.fixed_dictionaries({}, optional={n: _value(n) for n in BOUNDS})


@given(LIMITS, ASKED, st.booleans())
def test_a_manifest_never_loosens_any_limit_of_the_organizer(
    organizer: Limits, asked: dict[str, Any], memory_cgroup: bool,
) -> None:
    got = organizer.within(asked)
    theirs, mine = enforced(got, memory_cgroup), enforced(organizer, memory_cgroup)
    for name in mine:
        assert theirs[name] <= mine[name], (name, asked, organizer)
    # What it asks for within the organizer's, it gets.
    for name, value in asked.items():
        if enforced(organizer.over({name: value}), memory_cgroup)[name] <= mine[name]:
            assert getattr(got, name) == value, (name, value, got)


def test_zero_cpu_seconds_keeps_the_organizers_and_any_value_bounds_an_unbounded_one() -> None:
    assert Limits(cpu_seconds=2).within({"cpu_seconds": 0}).cpu_seconds == 2
    assert Limits(cpu_seconds=0).within({"cpu_seconds": 30}).cpu_seconds == 30
    assert Limits(cpu_seconds=0).within({"cpu_seconds": 0}).cpu_seconds == 0
    assert Limits(cpu_seconds=9).within({"cpu_seconds": 3}).cpu_seconds == 3


@pytest.mark.parametrize(("asked", "says"), [
    ({"cpu_seconds": -1}, "cpu_seconds"), ({"memory_mb": float("nan")}, "memory_mb"),
    ({"processes": True}, "processes"), ({"ram": 5}, "unknown limit 'ram'"),
    ({"tmp_mb": 10**9}, "tmp_mb"),
])
def test_a_manifests_bad_limit_is_refused_naming_it(asked: dict[str, Any], says: str) -> None:
    with pytest.raises(LimitError, match=says):
        Limits().within(asked)


async def test_a_submission_asking_for_no_cpu_limit_runs_under_the_organizers(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    """The whole path: the declaration's ``[sandbox] cpu_seconds = 2``, a submission whose
    bot.toml says ``cpu_seconds = 0``, and its RLIMIT_CPU read from /proc/self/limits
    inside its sandbox."""
    (place.bot / "bot.toml").write_text(
        'name = "greedy-for-cpu"\nruntime = "python3"\nrun = ["{python}", "hostile_bot.py"]\n'
        "[limits]\ncpu_seconds = 0\nmemory_mb = 256\n", encoding="utf-8")
    declaration = {"sandbox": {"cpu_seconds": 2},
                   "participants": [{"name": "greedy", "submission": str(place.bot)}]}
    _rest, plan = split(declaration, Path(place.root))
    limits = plan.bots["greedy"].limits
    proc = await hostile(confinement, place, "rlimits", limits=limits)
    sandboxed.append(proc)
    assert await proc.wait(120) == 0, list(proc.err)
    found = {r["limit"]: (r["soft"], r["hard"]) for r in results(proc) if "limit" in r}
    assert found["Max cpu time"] == ("2", "2"), found
    assert found["Max open files"] == (str(limits.open_files),) * 2, found
    assert limits.memory_mb == 256  # what it asked below the organizer's, it got
