""".ci/install-cpp-toolchain installs exactly the missing C++ packages, non-interactively,
and nothing when all are there. Run on a PATH holding only the shell tools it needs and
stand-ins for dpkg-query and apt-get that record what they were asked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "install-cpp-toolchain"
PACKAGES = ["cmake", "g++", "make", "pkg-config", "libgrpc++-dev", "libprotobuf-dev",
            "protobuf-compiler", "protobuf-compiler-grpc"]


def fake_path(tmp: Path, missing: list[str], apt: bool = True) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "grep", "id", "env"):
        real = shutil.which(tool)
        assert real, tool
        (bin_dir / tool).symlink_to(real)
    listed = " ".join(f'"{p}"' for p in missing)
    (bin_dir / "dpkg-query").write_text(
        "#!/usr/bin/env bash\n"
        f'for m in {listed}; do [ "${{!#}}" = "$m" ] && exit 1; done\n'
        'printf "install ok installed"\n')
    # Not root: the script goes through `sudo -n`; the stand-in just runs the command.
    (bin_dir / "sudo").write_text('#!/usr/bin/env bash\nshift\nexec "$@"\n')
    if apt:
        (bin_dir / "apt-get").write_text(
            "#!/usr/bin/env bash\n"
            f'echo "$DEBIAN_FRONTEND $*" >> {tmp / "apt.log"}\n')
    for f in bin_dir.iterdir():
        if not f.is_symlink():
            f.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp)}


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=60, env=env)


def test_installs_exactly_the_missing_packages(tmp_path: Path) -> None:
    proc = run(fake_path(tmp_path, ["libgrpc++-dev", "protobuf-compiler-grpc"]))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == [
        "noninteractive update -q",
        "noninteractive install -y -q --no-install-recommends libgrpc++-dev "
        "protobuf-compiler-grpc",
    ]


def test_does_nothing_when_everything_is_installed(tmp_path: Path) -> None:
    proc = run(fake_path(tmp_path, []))
    assert proc.returncode == 0, proc.stderr
    assert "C++ toolchain present" in proc.stdout
    assert not (tmp_path / "apt.log").exists()


def test_fails_clearly_without_apt_get(tmp_path: Path) -> None:
    proc = run(fake_path(tmp_path, ["cmake"], apt=False))
    assert proc.returncode == 1
    assert "no apt-get" in proc.stderr and "cmake" in proc.stderr


def test_ci_run_installs_before_the_quickstart_and_the_quickstart_needs_no_cpp() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index(".ci/install-cpp-toolchain") < ci.index('bash -euo pipefail -c "$block"')
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme[readme.index("## Quickstart"):readme.index("## The `chinchon` command")]
    assert os.access(SCRIPT, os.X_OK)
    for word in ("cmake", "apt-get", "g++", "grpc_cpp_plugin"):
        assert word not in quickstart, word


def run_cpp_test_without_toolchain(ci: str | None) -> subprocess.CompletedProcess[str]:
    """One C++ bot test in a child pytest whose PATH holds no compiler, cmake or protoc."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = str(Path(sys.executable).parent)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider",
         "tests/sample_bots/test_cpp_bot.py::test_cpp_bot_passes_the_conformance_check"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
    )


def test_cpp_tests_fail_without_the_toolchain_under_ci() -> None:
    proc = run_cpp_test_without_toolchain("true")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "C++ toolchain is missing" in proc.stdout and "1 error" in proc.stdout


def test_cpp_tests_skip_outside_ci_saying_how_to_install() -> None:
    proc = run_cpp_test_without_toolchain(None)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "1 skipped" in proc.stdout
    assert "apt-get install -y --no-install-recommends cmake g++" in proc.stdout
