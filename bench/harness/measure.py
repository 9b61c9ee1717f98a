"""What the benchmarks measure with: percentiles, a process's CPU seconds and memory (read
from /proc), the machine they ran on, a profile of a window, and a run's figures
written and reported."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")


def pct(xs: Sequence[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM in KiB from /proc/<pid>/status."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0])
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import grpc
    from google.protobuf.internal import api_implementation

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({model or platform.processor()}), {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
            f"grpcio {grpc.__version__}, protobuf {api_implementation.Type()}")


def start_profile(path: str) -> Any:
    """A cProfile.Profile already enabled when ``path`` is given (to dump there), else None."""
    if not path:
        return None
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    return prof


def finish(out: dict[str, Any], json_path: str | None,
           report: Callable[[dict[str, Any]], None]) -> int:
    """A script's end: its figures written to ``json_path`` (if given) and reported; the
    exit code."""
    if json_path:
        Path(json_path).write_text(json.dumps(out, indent=1))
    report(out)
    return 0
