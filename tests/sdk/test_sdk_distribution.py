"""The slim SDK: ``client_sdk/`` is a distribution of its own,
``chinchon-sdk``, that installs alone into a fresh virtual environment (grpcio and
protobuf, nothing of the referee) and plays a practice game there against a referee
running from this environment: two venvs, two processes, the real wire between them.

The fresh venv takes grpcio and protobuf the way pip is set up here: from its cache and
the package index, or offline when ``PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR`` name a folder of
wheels (setuptools and wheel among them, for the build; docs/bots.md). The SDK is built
from a copy of ``client_sdk/`` in the test's folder, so nothing is written into the
repository."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from chinchon_referee.service.server import RunningServer

from tests.support.helpers import ROOT, bot_token

SDK = ROOT / "client_sdk"


def _requirements(pyproject: Path) -> dict[str, str]:
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        name = dep.split(";")[0]
        for sep in ("<", ">", "=", "!", "~", "["):
            name = name.split(sep)[0]
        out[name.strip()] = dep
    return out


def test_the_sdk_needs_grpcio_and_protobuf_only_with_the_referees_pins() -> None:
    sdk, referee = _requirements(SDK / "pyproject.toml"), _requirements(ROOT / "pyproject.toml")
    assert set(sdk) == {"grpcio", "protobuf"}
    for name, spec in sdk.items():
        assert referee[name] == spec, f"{name}: the SDK asks {spec}, the referee {referee[name]}"
    # The referee depends on this very distribution, at its version, and builds only the
    # server's package itself.
    version = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]["version"]
    assert referee["chinchon-sdk"] == f"chinchon-sdk=={version}"
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert root["tool"]["setuptools"]["packages"]["find"]["where"] == ["server"]
    # What it ships: the bot author's packages, never the server's.
    packages = {p.name for p in (SDK / "chinchon").iterdir() if (p / "__init__.py").exists()}
    assert packages == {"engine", "wire", "sdk", "strategies", "v1", "env"}
    # The training environment's packages are an optional extra, never a dependency.
    extras = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {d.split(">")[0].split("=")[0] for d in extras["env"]} == {"pettingzoo", "gymnasium", "numpy"}


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ``pip install ./client_sdk`` alone; its python."""
    base = tmp_path_factory.mktemp("sdk-venv")
    src = base / "client_sdk"
    shutil.copytree(SDK, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([str(python), "-m", "pip", "install", "-q", str(src)], env=env)
    return python


@pytest.mark.slow
def test_the_sdk_installs_alone(sdk_venv: Path) -> None:
    listed = _run([str(sdk_venv), "-m", "pip", "list", "--format", "json"])
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"chinchon-sdk", "grpcio", "protobuf"} <= names
    referee_deps = {"rich", "openskill", "aiohttp", "uvloop", "grpcio-health-checking",
                    "grpcio-reflection", "chinchon-referee", "psycopg"}
    assert names & referee_deps == set(), names
    found = _run([str(sdk_venv), "-c", "import importlib.util as u, json; print(json.dumps("
                  "[u.find_spec(m) is not None for m in ('chinchon.sdk', 'chinchon.engine', "
                  "'chinchon.strategies', 'chinchon_referee')]))"], cwd="/")
    assert json.loads(found.stdout) == [True, True, True, False]


@pytest.mark.slow
@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_a_bot_in_the_sdk_venv_practices_against_this_referee(
    sdk_venv: Path, server: RunningServer,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(sdk_venv), "-m", "chinchon.sdk", "--target", server.target, "--bot", "greedy",
        "--practice", "random", "--games", "1", cwd="/",
        env={"PATH": os.environ.get("PATH", ""), "CHINCHON_TOKEN": bot_token("alice")},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode == 0, err.decode()
    assert b"1 games" in err and b"chinchon: game " in err, err.decode()
