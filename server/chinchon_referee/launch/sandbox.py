"""The sandbox of a launched bot: a bubblewrap (``bwrap``) command line.

Debian's ``bubblewrap`` makes each bot a set of new namespaces (user, PID, network,
IPC, UTS, cgroup) over a filesystem built for it alone:

- the system's programs and libraries read-only (``/usr``, the ``/bin``, ``/lib``
  links, a few files of ``/etc``: the dynamic linker's cache, alternatives, the time
  zone; not ``/etc`` as a whole, which holds the machine's secrets);
- the runtime the bot needs, read-only: the Python running the referee (its prefix,
  the virtual environment, the SDK's folders), or any other folders the organizer names;
- the protocol: the referee's ``.proto`` files (``chinchon/v1/*.proto``), read-only at
  :data:`PROTOS_INSIDE` (``CHINCHON_PROTOS`` says where), for a bot or a build in any
  language to load or compile them;
- the bot's own folder read-only, and its working directory (a build's folder is a
  tmpfs of ``build_mb`` instead, its source read-only beside it);
- a private ``/tmp`` (a tmpfs of ``tmp_mb``), a new ``/proc`` and a minimal ``/dev``,
  read-only but for ``/dev/shm`` (a tmpfs of a quarter of ``memory_mb``);
- the referee's Unix socket at :data:`SOCKET_INSIDE`, and nothing else of the host:
  no network (its network namespace has only a loopback, and the system-call filter
  refuses sockets of any family but AF_UNIX: AF_VSOCK is no namespace's), none of the
  organizer's home, database, secrets, or other bots' folders;
- an environment of its own: its address, its token, PATH, HOME=/tmp and the locale;
- all capabilities dropped, a new session (no terminal to inject into), no new
  privileges (setuid programs do not raise them), killed with its parent
  (``--die-with-parent``); in its own PID namespace its whole tree dies with it.

rlimits are set by ``prlimit`` inside (:mod:`.limits`); cgroups around it
(:mod:`.cgroups`); a system-call filter narrows what of the kernel it reaches
(:mod:`.seccomp`). docs/security.md says what each layer stops and what it does not.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .limits import Limits

#: Where the referee's socket is inside every sandbox (the bot's ``--target``).
SOCKET_INSIDE = "/run/chinchon/referee.sock"
TARGET_INSIDE = f"unix:{SOCKET_INSIDE}"
#: Where a build's source is bound (read-only) inside its sandbox.
SOURCE_INSIDE = "/run/chinchon/source"
#: Where the protocol's .proto files are (read-only) inside every sandbox: the folder
#: holding ``chinchon/v1/*.proto``, as ``protoc -I`` takes it.
PROTOS_INSIDE = "/run/chinchon/protos"
#: What of /etc a program may need (read-only, each where it exists).
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
       "nsswitch.conf", "passwd", "group")
#: The system's folders, read-only (each where it exists; /bin, /lib... are links
#: into /usr on a merged-/usr system and bound as they are otherwise).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The environment a bot gets (beside CHINCHON_TARGET and CHINCHON_TOKEN).
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
       "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp",
       "CHINCHON_PROTOS": PROTOS_INSIDE}


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made here; the message names what is missing."""


def python_runtime() -> tuple[Path, ...]:
    """The folders the Python running the referee needs to run a bot with the SDK:
    its installation, its virtual environment, and where the SDK and its
    dependencies are installed (an editable install's source folder included)."""
    found = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    for module in ("chinchon", "grpc", "google.protobuf"):
        spec = importlib.util.find_spec(module)
        for location in (spec.submodule_search_locations or []) if spec else []:
            depth = module.count(".") + 1
            found.add(Path(location).resolve().parents[depth - 1])
    return tuple(sorted(found))


def protos_folder() -> Path | None:
    """The referee's own ``.proto`` files: the folder holding ``chinchon/v1/*.proto``
    beside its source (a checkout, as the README installs it); None where the
    installation has none."""
    here = Path(__file__).resolve().parents[3] / "protos"
    return here if (here / "chinchon" / "v1" / "referee.proto").is_file() else None


@dataclass(frozen=True)
class SandboxSpec:
    """One bot's sandbox: its folder, the referee's socket, the runtime it may read,
    its limits."""

    folder: Path
    #: The referee's Unix socket, bound at SOCKET_INSIDE; None: none (a build).
    socket: Path | None
    limits: Limits = field(default_factory=Limits)
    runtime: tuple[Path, ...] = ()
    #: A build: its source, bound read-only at :data:`SOURCE_INSIDE`, while ``folder``
    #: is a writable tmpfs of ``build_mb`` MiB (gone with the sandbox: what it leaves
    #: is sent out as a tar stream, :mod:`.build`). None: ``folder`` is read-only.
    build_from: Path | None = None
    build_mb: int = 0


def _system_binds() -> list[str]:
    args: list[str] = []
    for top in SYSTEM:
        p = Path(top)
        if p.is_symlink():
            args += ["--symlink", str(p.readlink()), top]
        elif p.is_dir():
            args += ["--ro-bind", top, top]
    for name in ETC:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's whole environment: :data:`ENV` and ``env`` (its address and
    token), nothing of the organizer's. It is bubblewrap's own environment, which it
    passes on: never ``--setenv``, whose values every local user would see in ``ps``."""
    return {**ENV, **env}


def dev_args(limits: Limits) -> list[str]:
    """A minimal ``/dev`` (null, zero, full, random, urandom, tty, pts), read-only, with
    ``/dev/shm`` a tmpfs of :attr:`.Limits.shm_mb`: bubblewrap's own ``/dev`` is a
    writable tmpfs the size of half the machine's memory, and its ``/dev/shm`` a folder
    in it, bounded by nothing but a memory cgroup where there is one."""
    return ["--dev", "/dev", "--size", str(limits.shm_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev"]


def bwrap_args(spec: SandboxSpec) -> list[str]:
    """bubblewrap's options for ``spec`` (the program and its arguments follow, after
    ``prlimit`` and its options: :func:`command`)."""
    folder = str(spec.folder.resolve())
    args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            *_system_binds(),
            "--proc", "/proc", *dev_args(spec.limits),
            "--size", str(spec.limits.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--dir", "/run/chinchon"]
    protos = protos_folder()
    if protos is not None:
        args += ["--ro-bind", str(protos), PROTOS_INSIDE]
    if spec.socket is not None:
        args += ["--ro-bind", str(spec.socket), SOCKET_INSIDE]
    for path in spec.runtime:
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    if spec.build_from is not None:
        args += ["--ro-bind", str(spec.build_from.resolve()), SOURCE_INSIDE,
                 "--size", str(spec.build_mb * 1024 * 1024), "--tmpfs", folder]
    else:
        args += ["--ro-bind", folder, folder]
    # The root bubblewrap builds is a tmpfs the bot would own: read-only too.
    return [*args, "--remount-ro", "/", "--chdir", folder]


def command(bwrap: str, spec: SandboxSpec, argv: Sequence[str], memory_cgroup: bool,
            seccomp_fd: int | None = None) -> list[str]:
    """The whole command line: bubblewrap (with the system-call filter on
    ``seccomp_fd``, :mod:`.seccomp`), then ``prlimit`` with the limits, then the bot's
    own command."""
    limits = spec.limits.prlimit_args(memory_cgroup)
    seccomp = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
    return [bwrap, *bwrap_args(spec), *seccomp, "--",
            "prlimit", *limits, "--", *argv]


def find_bwrap() -> str:
    """bubblewrap's path, once it has shown that it can make a sandbox here (user and
    network namespaces); SandboxUnavailable saying what is missing otherwise."""
    if sys.platform != "linux":
        raise SandboxUnavailable(f"the sandbox needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install "
                                 "bubblewrap (Debian/Ubuntu), or your distribution's package")
    if shutil.which("prlimit") is None:
        raise SandboxUnavailable("prlimit (util-linux) is not installed")
    probe = subprocess.run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                            "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        raise SandboxUnavailable(
            f"bubblewrap cannot make a sandbox here: {probe.stderr.strip() or probe.returncode} "
            "(user namespaces may be off: sysctl kernel.unprivileged_userns_clone=1, "
            "or run where they are allowed)")
    return bwrap
