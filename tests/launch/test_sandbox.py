"""The sandbox of launched bots (chinchon_referee.launch: sandbox, limits, cgroups),
each layer against a hostile bot that is a real process (tests/bots/hostile_bot.py)
trying what it claims to stop: the network, the organizer's files, the database and
another bot's folder, writing outside its /tmp, filling the disk, a fork bomb, memory
without end, spinning the CPU, mount/ptrace/raising its limits, sockets of any family but
AF_UNIX, living on after it is stopped, gigabytes of stderr. An honest SDK bot plays
through its socket meanwhile."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from chinchon_referee.launch.bots import BotProcess, Sandboxed, launch
from chinchon_referee.launch.cgroups import CgroupRoot, CgroupVersion
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.limits import LimitError, Limits
from chinchon_referee.launch.sandbox import (
    SOCKET_INSIDE,
    SandboxSpec,
    SandboxUnavailable,
    find_bwrap,
)
from chinchon_referee.service.server import start_server

from tests.support.helpers import NODE_BOT, ROOT, bot_token, tokens_for
from tests.support.sandbox import SECRET, Place, hostile, results, spec_for
from tests.support.waits import until

pytestmark = pytest.mark.usefixtures("sandboxed")


async def _ran(proc: BotProcess, procs: list[BotProcess], timeout: float = 120) -> int:
    procs.append(proc)
    return await proc.wait(timeout)


async def test_an_honest_bot_plays_through_the_socket_bound_inside(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    sock = place.root / "real.sock"
    server = await start_server("127.0.0.1:0", None, tokens_for(["honest"]), unix=sock)
    try:
        proc = await launch([sys.executable, "-m", "chinchon.sdk", "--practice", "greedy",
                             "--games", "1"], server.target, bot_token("honest"),
                            sandbox=Sandboxed(confinement, spec_for(place, socket_path=sock)))
        rc = await _ran(proc, sandboxed)
    finally:
        await server.stop(0)
    assert rc == 0, "".join(proc.err)[-3000:]
    assert "chinchon: game" in "".join(proc.err)


@pytest.mark.parametrize("kind", ["node", "cpp"])
async def test_the_node_and_cpp_samples_play_sandboxed(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess], kind: str,
    request: pytest.FixtureRequest,
) -> None:
    """Their folder bound read-only (the Node bot's with its node_modules; the C++ bot's
    build folder), the system's libraries and node under /usr."""
    if kind == "node":  # it reads the repository's protos at run time: a runtime folder
        folder, cmd, runtime = NODE_BOT.parent, ["node", "bot.js"], (ROOT / "protos",)
    else:
        binary = request.getfixturevalue("cpp_bot")
        folder, cmd, runtime = binary.parent, [str(binary)], ()
    sock = place.root / "real.sock"
    server = await start_server("127.0.0.1:0", None, tokens_for([kind]), unix=sock)
    try:
        spec = SandboxSpec(folder, sock, Limits(), runtime)
        proc = await launch([*cmd, "--practice", "greedy", "--games", "1"], server.target,
                            bot_token(kind), sandbox=Sandboxed(confinement, spec, kind))
        rc = await _ran(proc, sandboxed, 180)
    finally:
        await server.stop(0)
    assert rc == 0, "".join(proc.err)[-3000:]


async def test_no_network_at_all_not_even_the_referees_tcp_port(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    server = await start_server("127.0.0.1:0", None, tokens_for([]))
    try:
        proc = await hostile(confinement, place, "net", "127.0.0.1", str(server.port))
        assert await _ran(proc, sandboxed) == 0, list(proc.err)
    finally:
        await server.stop(0)
    found = results(proc)
    assert found[0] == {"target": "unix:/run/chinchon/referee.sock"}
    tries = found[1:]
    assert len(tries) == 4 and not any(t["reached"] for t in tries), tries


def _vsock_port_held() -> tuple[socket.socket | None, int]:
    """A vsock port this process holds, where the machine has vsock (a VM under
    Firecracker, Kata, QEMU with vhost-vsock), else (None, 1234)."""
    try:
        held = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    except OSError:
        return None, 1234
    held.bind((socket.VMADDR_CID_ANY, socket.VMADDR_PORT_ANY))
    return held, int(held.getsockname()[1])


async def test_sockets_of_every_family_but_unix_are_refused(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    """A network namespace holds AF_INET, AF_INET6, AF_NETLINK and AF_PACKET; AF_VSOCK
    is the host's (a bind to a port the host holds fails EADDRINUSE without the filter).
    The filter refuses socket() and socketpair() of every family but AF_UNIX with
    EAFNOSUPPORT; the referee's socket is still reached, and no abstract Unix socket of
    the host (those belong to a network namespace)."""
    held, port = _vsock_port_held()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"chinchon-test-{os.getpid()}"
    abstract.bind("\0" + name)
    abstract.listen()
    try:
        proc = await hostile(confinement, place, "families", str(port), SOCKET_INSIDE, name)
        assert await _ran(proc, sandboxed) == 0, list(proc.err)
    finally:
        abstract.close()
        if held is not None:
            held.close()
    found = results(proc)[1:]
    made = {r["family"]: (r["made"], r["errno"]) for r in found if "family" in r}
    assert made.pop("AF_UNIX") == (True, 0), found
    assert made == {name: (False, errno.EAFNOSUPPORT) for name in made}, made
    assert {"AF_VSOCK", "AF_NETLINK", "AF_INET", "AF_PACKET"} <= set(made)
    pairs = {r["pair"]: (r["made"], r["errno"]) for r in found if "pair" in r}
    assert pairs == {"AF_INET": (False, errno.EAFNOSUPPORT), "AF_UNIX": (True, 0)}, pairs
    (bind,) = [r for r in found if "vsock_bind" in r]
    assert bind == {"vsock_bind": False, "errno": errno.EAFNOSUPPORT}, bind
    assert {"referee": True} in found, found
    assert {"abstract": False, "errno": errno.ECONNREFUSED} in found, found


async def test_nothing_of_the_organizer_the_database_or_another_bot_is_readable(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    theirs = [place.organizer / "admin-token", place.organizer / "tournament.sqlite3",
              place.other / "strategy.py", Path("/etc/shadow"), Path.home() / ".bashrc",
              Path("/proc/1/environ"), Path(__file__)]
    proc = await hostile(confinement, place, "read", str(place.bot / "mine.txt"),
                         *map(str, theirs))
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    found = results(proc)
    assert found[1] == {"path": str(place.bot / "mine.txt"), "read": True, "data": "my own file"}
    refused = found[2:-1]
    assert [r["path"] for r in refused] == list(map(str, theirs))
    assert not any(r["read"] and SECRET in r["data"] for r in refused), refused
    assert not any(r["read"] for r in refused if r["path"] != "/proc/1/environ"), refused
    # /proc is its own: pid 1 is its sandbox's, whose environment holds no secret; its
    # root holds the system's folders, its runtime's and its own, nothing else.
    assert "home" not in found[-1]["root"] and "var" not in found[-1]["root"], found[-1]


async def test_it_writes_its_private_tmp_only(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    outside = [place.bot / "mine.txt", place.bot / "new.txt", Path("/usr/pwned"),
               Path("/etc/passwd"), Path("/pwned"), Path("/run/chinchon/pwned"),
               Path("/dev/pwned")]
    proc = await hostile(confinement, place, "write", "/tmp/scratch", *map(str, outside))
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    found = results(proc)[1:]
    assert found[0] == {"path": "/tmp/scratch", "wrote": True}
    assert not any(r["wrote"] for r in found[1:]), found
    assert (place.bot / "mine.txt").read_text() == "my own file"
    assert not (place.bot / "new.txt").exists() and not Path("/pwned").exists()


@pytest.mark.parametrize(("path", "limits", "says", "bound"), [
    ("/tmp/big", Limits(tmp_mb=8, file_size_mb=64), "No space left", 8),
    ("/tmp/big", Limits(tmp_mb=64, file_size_mb=4), "File too large", 4),
    # /dev/shm: a tmpfs of a quarter of its memory (bubblewrap's own is half the machine's).
    ("/dev/shm/big", Limits(memory_mb=64, file_size_mb=64), "No space left", 16),
])
async def test_filling_the_disk_stops_at_its_tmp_shm_and_file_size(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess], path: str,
    limits: Limits, says: str, bound: int,
) -> None:
    proc = await hostile(confinement, place, "fill", path, limits=limits)
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    (found,) = results(proc)[1:]
    assert says in found["error"], found
    assert found["filled"] <= bound * 1024 * 1024, found


def _cgroups(confinement: Confinement) -> CgroupRoot:
    if not isinstance(confinement.cgroups, CgroupRoot):
        # As root, RLIMIT_NPROC binds nothing and memory is bounded per process only:
        # these attacks are stopped by cgroups (CI has them: cgroup v1).
        why = f"no cgroups here: {confinement.cgroups.why}"
        if _ci():
            pytest.fail(why)
        pytest.skip(why)
    return confinement.cgroups


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


async def test_a_fork_bomb_stops_at_its_process_limit(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    _cgroups(confinement)
    proc = await hostile(confinement, place, "fork", limits=Limits(processes=32))
    sandboxed.append(proc)
    await until(lambda: any("forked" in r for r in results(proc)) or proc.returncode is not None,
                "the fork bomb hit its limit", 120, lambda: list(proc.err))
    (found,) = [r for r in results(proc) if "forked" in r]
    assert found["forked"] < 32 and "Resource temporarily unavailable" in found["error"], found
    assert proc.cgroup is not None and len(proc.cgroup.pids()) <= 32
    await proc.stop(grace=1.0)
    group = proc.cgroup
    # Killed, the bomb's processes leave the group as the kernel reaps them (CI saw one
    # still listed just after the stop).
    await until(lambda: group.pids() == set(), "every process of the bomb gone", 30,
                group.pids)
    await until(lambda: not any(f.exists() for f in group.folders), "its cgroup removed", 60)


async def test_memory_without_end_is_killed_at_its_cap(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    _cgroups(confinement)
    proc = await hostile(confinement, place, "memory", limits=Limits(memory_mb=96))
    sandboxed.append(proc)
    await until(lambda: proc.returncode is not None or proc.oom_killed(),
                "the hoarder was stopped", 120, lambda: results(proc)[-1:])
    oom = proc.oom_killed()
    await proc.wait(60)
    most = max(r.get("allocated_mb", 0) for r in results(proc))
    assert most <= 96, most
    assert oom or any(r.get("error") == "MemoryError" for r in results(proc))


async def test_a_spinning_bot_is_held_to_its_cpu_quota(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    root = _cgroups(confinement)
    proc = await hostile(confinement, place, "spin", "600", limits=Limits(cpu=0.1))
    sandboxed.append(proc)
    assert proc.cgroup is not None
    stat = next(f for f in proc.cgroup.folders
                if (f / ("cpu.max" if root.version is CgroupVersion.V2 else "cpu.cfs_quota_us")).exists()) \
        / "cpu.stat"

    def throttled() -> int:
        fields = dict(line.split() for line in stat.read_text().splitlines())
        return int(fields.get("nr_throttled", 0))

    await until(lambda: throttled() > 0, "the kernel throttled the spinning bot", 60,
                lambda: stat.read_text())
    await proc.stop(grace=1.0)


async def test_mount_ptrace_setuid_and_raising_its_limits_are_refused(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHINCHON_ADMIN_TOKEN", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    # ptrace: the referee (this process); its PID is not even in the bot's namespace.
    proc = await hostile(confinement, place, "escape", str(os.getpid()),
                         limits=Limits(open_files=128),
                         token="the-bot-token")
    procs_cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
    assert b"the-bot-token" not in procs_cmdline  # the token is never on a command line
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    mount, ptrace, raised, setuid, env, unshare, io_uring = results(proc)[1:]
    assert not mount["mount"] and not ptrace["ptrace"] and not setuid["setuid"]
    # The system-call filter (launch/seccomp.py): no nested namespace, no io_uring.
    assert not unshare["unshare"] and unshare["errno"] == errno.EPERM, unshare
    assert not io_uring["io_uring"] and io_uring["errno"] == errno.EPERM, io_uring
    assert not raised["raised"] and raised["hard"] == 128
    assert set(env["environment"]) <= {"CHINCHON_TARGET", "CHINCHON_TOKEN", "CHINCHON_PROTOS",
                                       "PATH", "HOME",
                                       "LANG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
                                       "TMPDIR", "LC_CTYPE", "PWD", "SHLVL", "_"}, env


async def test_ptrace_is_refused_even_of_its_own_processes(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    """The filter refuses ptrace and process_vm_readv outright (a debugger or a
    sanitizer that traces does not run sandboxed)."""
    proc = await hostile(confinement, place, "trace_own")
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    ptrace, readv = results(proc)[1:]
    assert ptrace == {"ptrace": False, "errno": errno.EPERM}, ptrace
    assert readv == {"process_vm_readv": False, "errno": errno.EPERM}, readv


async def test_what_is_left_machine_wide_proc_files_are_readable(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    """Not a defence: it pins what docs/security.md says is left. A PID namespace hides
    other processes, not the machine's counters: the load (and the host's process
    count), CPU time, memory and pressure of the whole machine, which tell how busy the
    other bots are."""
    shared = ["/proc/loadavg", "/proc/stat", "/proc/meminfo", "/proc/uptime"]
    proc = await hostile(confinement, place, "read", *shared)
    assert await _ran(proc, sandboxed) == 0, list(proc.err)
    found = {r["path"]: r for r in results(proc) if "path" in r}
    assert all(found[p]["read"] for p in shared), found
    assert found["/proc/stat"]["data"].startswith("cpu "), found


def _marked(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


async def test_a_bot_that_ignores_sigterm_and_daemonizes_is_gone_with_its_tree(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess],
) -> None:
    marker = f"linger-marker-{os.getpid()}"
    proc = await hostile(confinement, place, "linger", marker)
    sandboxed.append(proc)
    await until(lambda: any(r.get("daemonized") for r in results(proc)) and _marked(marker),
                "the bot daemonized a child", 60, lambda: list(proc.err))
    await proc.finish(wait=0.5, grace=1.0)  # dismissed, it does not exit: stopped
    await until(lambda: not _marked(marker), "its daemon died with it", 30,
                lambda: _marked(marker))


async def test_gigabytes_of_stderr_stop_at_the_log_size(
    confinement: Confinement, place: Place, sandboxed: list[BotProcess], tmp_path: Path,
) -> None:
    log = tmp_path / "bot.log"
    proc = await hostile(confinement, place, "shout", limits=Limits(file_size_mb=2), stderr=log)
    assert await _ran(proc, sandboxed) == 0
    (found,) = results(proc)[1:]
    assert "File too large" in found["error"], found
    assert log.stat().st_size <= 2 * 1024 * 1024


def test_limits_out_of_bounds_or_unknown_are_refused_by_name() -> None:
    with pytest.raises(LimitError, match="memory_mb"):
        Limits(memory_mb=1)
    with pytest.raises(LimitError, match="unknown limit 'ram'"):
        Limits().over({"ram": 5})
    with pytest.raises(LimitError, match="cpu"):
        Limits().over({"cpu": "lots"})
    assert Limits().over({"cpu": 2}).cpu == 2


def test_without_bubblewrap_the_sandbox_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        find_bwrap()


def test_the_filter_is_one_program_per_known_architecture() -> None:
    from chinchon_referee.launch.seccomp import program

    for machine in ("x86_64", "aarch64"):
        code = program(machine)
        assert code is not None and len(code) % 8 == 0 and len(code) // 8 < 4096
    assert program("riscv64") is None  # no filter there (docs/security.md says so)


def test_a_confinement_waits_for_a_group_that_stays_busy_a_moment() -> None:
    """A killed bot's group can stay busy for a while on a loaded machine (CI: the fork
    bomb's 16 processes still leaving it when the run ended). Here a group is held busy
    by a folder inside it, which another thread removes 0.5 s later: the close waits for
    it instead of leaving this process's folders behind."""
    mine = Confinement.find()
    root = _cgroups(mine)
    group = root.make("busy", Limits())
    inner = group.folders[0] / "held"
    inner.mkdir()
    assert not group.remove()  # busy: the folder inside keeps it
    release = threading.Timer(0.5, inner.rmdir)
    release.start()
    try:
        mine.close(within=60)
    finally:
        release.join()
    assert not any(base.exists() for base in root.bases.values()), root.bases


def test_the_folders_a_killed_referee_left_are_swept_by_the_next() -> None:
    """A referee killed with kill -9 never closes its confinement: its folders stay. The
    next confinement made here removes those of processes now gone (empty ones only),
    and leaves a live process's alone."""
    mine = _cgroups(Confinement.find())
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    parents = {base.parent for base in mine.bases.values()}
    left = [parent / f"chinchon-{gone.pid}-7" for parent in parents]
    live = [parent / f"chinchon-{os.getpid()}-999" for parent in parents]
    for folder in left:
        (folder / "bot-1").mkdir(parents=True)
    for folder in live:
        folder.mkdir()
    try:
        again = Confinement.find()
        again.close()
        assert not any(folder.exists() for folder in left), left
        assert all(folder.exists() for folder in live), live
    finally:
        for folder in live:
            folder.rmdir()
        mine.remove()


async def test_a_confinement_leaves_no_cgroup_behind(place: Place) -> None:
    mine = Confinement.find()
    root = _cgroups(mine)
    proc = await hostile(mine, place, "fork", limits=Limits(processes=16))
    await until(lambda: any("forked" in r for r in results(proc)), "the bomb went off", 120)
    await proc.kill()
    mine.close()
    assert not any(base.exists() for base in root.bases.values()), root.bases
