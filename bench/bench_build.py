"""What the bounded build area costs: a submission's copy and build, bounded against not.

One submission (``--files`` Python modules of ``--kb`` KiB each, and a build that
byte-compiles them and writes ``--out-mb`` files of 1 MiB) built, alternately for
``--rounds`` pairs, in the same sandbox (bubblewrap, the seccomp filter, prlimit, a
cgroup where there are cgroups) two ways:

* **bounded** (``chinchon bots check``'s): the bounded copy in (:mod:`.launch.intake`),
  the build in a tmpfs of ``build_disk_mb``, its result sent out as a tar stream and
  taken by the same bounded copy (:mod:`.launch.build`);
* **unbounded** (the former way): ``shutil.copytree`` of the submission, then the
  build in that copy, bound writable in place.

Each figure is the wall time from the submission to its built folder; the medians and
their ratio are printed (and written as JSON with ``--json``).

    python bench/bench_build.py                    # ~1 minute
    python bench/bench_build.py --smoke --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chinchon_referee.host.processes import spawn
from chinchon_referee.launch.bots import BotProcess
from chinchon_referee.launch.build import BuildBounds, build
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.intake import Bounds, take
from chinchon_referee.launch.limits import Limits
from chinchon_referee.launch.sandbox import SandboxSpec, environment, python_runtime

BUILD = ("import compileall, os, sys\n"
         "assert compileall.compile_dir('.', quiet=1)\n"
         "os.makedirs('dist', exist_ok=True)\n"
         "for i in range(int(sys.argv[1])):\n"
         "    with open(f'dist/blob{i}.bin', 'wb') as f:\n"
         "        f.write(os.urandom(1024 * 1024))\n")


def make_submission(root: Path, files: int, kb: int) -> Path:
    sub = root / "submission"
    (sub / "pkg").mkdir(parents=True)
    line = "x = [" + ", ".join(str(i) for i in range(20)) + "]\n"
    body = line * max(1, kb * 1024 // len(line))
    for i in range(files):
        (sub / "pkg" / f"m{i}.py").write_text(body)
    (sub / "build.py").write_text(BUILD)
    return sub


async def bounded(confinement: Confinement, sub: Path, work: Path, out_mb: int) -> float:
    t = time.perf_counter()
    take(sub, work / "submission", Bounds())
    failed = await build(confinement, work / "submission", work / "bot",
                         ["{python}", "build.py", str(out_mb)], Limits(), BuildBounds(),
                         300.0, work / "build.log", python_runtime(), "bench")
    assert failed is None, failed
    return time.perf_counter() - t


async def unbounded(confinement: Confinement, sub: Path, work: Path, out_mb: int) -> float:
    """The former way: copytree, then the build in the copy bound writable in place."""
    t = time.perf_counter()
    folder = work / "bot"
    shutil.copytree(sub, folder, symlinks=True)
    spec = SandboxSpec(folder, None, Limits(), python_runtime())
    args, group, fd = confinement.prepare("bench-build", spec,
                                          [sys.executable, "build.py", str(out_mb)])
    where = str(folder.resolve())
    at = next(i for i in range(len(args) - 1) if args[i:i + 2] == ["--ro-bind", where])
    args[at] = "--bind"  # the folder writable in place, as the build had it
    try:
        with open(work / "build.log", "wb") as log:
            child = await spawn(args, cwd=folder, env=environment({}), stdout=log, stderr=log,
                                pass_fds=() if fd is None else (fd,))
    finally:
        if fd is not None:
            os.close(fd)
    code = await BotProcess(child, cgroup=group).wait()
    assert code == 0, (work / "build.log").read_text()[-2000:]
    return time.perf_counter() - t


async def main(args: argparse.Namespace) -> dict[str, Any]:
    confinement = Confinement.find()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-build-") as d:
            root = Path(d)
            sub = make_submission(root, args.files, args.kb)
            pairs = []
            for r in range(args.rounds):
                works = [root / f"b{r}", root / f"u{r}"]
                for w in works:
                    w.mkdir()
                b = await bounded(confinement, sub, works[0], args.out_mb)
                u = await unbounded(confinement, sub, works[1], args.out_mb)
                pairs.append({"bounded_s": round(b, 3), "unbounded_s": round(u, 3),
                              "ratio": round(b / u, 3)})
                for w in works:
                    shutil.rmtree(w)
    finally:
        confinement.close()
    return {"files": args.files, "kb": args.kb, "out_mb": args.out_mb, "pairs": pairs,
            "median_bounded_s": statistics.median(p["bounded_s"] for p in pairs),
            "median_unbounded_s": statistics.median(p["unbounded_s"] for p in pairs),
            "median_ratio": statistics.median(p["ratio"] for p in pairs),
            "cgroups": confinement.warning is None}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--files", type=int, default=300, help="modules in the submission")
    ap.add_argument("--kb", type=int, default=8, help="KiB per module")
    ap.add_argument("--out-mb", type=int, default=32, help="MiB the build writes")
    ap.add_argument("--smoke", action="store_true", help="briefly (a check)")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    if a.smoke:
        a.rounds, a.files, a.out_mb = 1, 20, 2
    result = asyncio.run(main(a))
    print(json.dumps(result, indent=2))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2))
