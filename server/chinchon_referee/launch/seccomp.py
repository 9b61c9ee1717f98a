"""A system-call filter for sandboxed bots: the kernel interfaces a bot never needs.

bubblewrap installs a seccomp program given on a file descriptor (``--seccomp FD``)
just before it runs the bot; this module writes that program (classic BPF, as the
kernel reads it) for the machine's architecture, with the standard library only.

Refused with EPERM (``ENOSYS`` for ``clone3``, whose flags a filter cannot read, so
that the C library falls back to ``clone``):

- new namespaces: ``unshare``, ``setns``, and ``clone`` with any ``CLONE_NEW*`` flag
  (a nested user namespace is where most of the kernel's namespace bugs are reached);
- mounting and the mount API, ``pivot_root``, ``chroot``;
- ``ptrace``, ``process_vm_readv``/``writev``, ``perf_event_open``, ``bpf``,
  ``userfaultfd``, ``io_uring_*``, the key rings, kernel modules, ``kexec``, ``reboot``,
  swap, quotas, ``acct``, ``open_by_handle_at``, host and domain names;
- on x86_64, every x32-ABI call (numbers from 0x40000000), and any other architecture
  (an i386 call from a 64-bit process, whose ``socketcall`` would pass a socket's family
  where no filter can read it) is killed.

``socket`` and ``socketpair`` are refused with EAFNOSUPPORT for every address family
but those of :data:`SOCKET_FAMILIES` (AF_UNIX alone): a network namespace holds
AF_INET, AF_INET6, AF_NETLINK and AF_PACKET, but not AF_VSOCK (on a virtual machine
with vsock, it is the host's port space) nor any family the kernel has not made
per-namespace. EAFNOSUPPORT is what a kernel without the family says: runtimes that
probe (gRPC C-core's IPv6 check) take it as "not here" and go on.

Everything else is allowed: this narrows what the kernel offers a bot; it is not an
allow-list (docs/security.md says what remains).
"""

from __future__ import annotations

import errno
import os
import platform
import socket
import struct

# BPF instruction classes and fields.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
# seccomp return values.
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
# struct seccomp_data: nr at 0, arch at 4, args[0] (low half, little-endian) at 16.
_NR, _ARCH, _ARG0 = 0, 4, 16

#: The CLONE_NEW* flags (namespaces, CLONE_NEWTIME included).
CLONE_NEW = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | \
    0x10000000 | 0x20000000 | 0x40000000

#: Per architecture: its AUDIT_ARCH value, and the numbers of the calls refused.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {
        "ptrace": 101, "acct": 163, "mount": 165, "umount2": 166, "pivot_root": 155,
        "chroot": 161, "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170,
        "setdomainname": 171, "init_module": 175, "delete_module": 176, "quotactl": 179,
        "add_key": 248, "request_key": 249, "keyctl": 250, "kexec_load": 246,
        "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303,
        "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
        "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
        "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    }),
    "aarch64": (0xC00000B7, {
        "ptrace": 117, "acct": 89, "mount": 40, "umount2": 39, "pivot_root": 41,
        "chroot": 51, "swapon": 224, "swapoff": 225, "reboot": 142, "sethostname": 161,
        "setdomainname": 162, "init_module": 105, "delete_module": 106, "quotactl": 60,
        "add_key": 217, "request_key": 218, "keyctl": 219, "kexec_load": 104,
        "unshare": 97, "perf_event_open": 241, "name_to_handle_at": 264,
        "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270,
        "process_vm_writev": 271, "finit_module": 273, "kexec_file_load": 294, "bpf": 280,
        "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    }),
}
_CLONE = {"x86_64": 56, "aarch64": 220}
_CLONE3 = 435
#: socket(2) and socketpair(2): family is their first argument.
_SOCKET = {"x86_64": (41, 53), "aarch64": (198, 199)}

#: The address families a sandboxed bot may make sockets of, each with why. Every
#: sample (the Python SDK, Node, C++) reaches the referee through its Unix socket, and
#: their runtimes make Unix socket pairs for themselves; none needs another family.
SOCKET_FAMILIES: dict[int, str] = {
    socket.AF_UNIX: "the referee's socket (a unix: target), and the socket pairs "
                    "runtimes make for themselves (gRPC, libuv)",
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as bytes, or None for an
    architecture it does not know (the sandbox then runs without one)."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        return None
    arch, calls = _ARCHES[machine]
    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    out = [_op(_LD_W_ABS, _ARCH), _op(_JEQ_K, arch, 1, 0), _op(_RET_K, _KILL_PROCESS),
           _op(_LD_W_ABS, _NR)]
    if machine == "x86_64":
        out += [_op(_JGE_K, 0x40000000, 0, 1), _op(_RET_K, eperm)]  # the x32 ABI
    for nr in sorted(calls.values()):
        out += [_op(_JEQ_K, nr, 0, 1), _op(_RET_K, eperm)]
    out += _socket_families(machine)
    out += [_op(_JEQ_K, _CLONE3, 0, 1), _op(_RET_K, enosys),
            # clone: refused when its flags (args[0]) ask for a new namespace.
            _op(_JEQ_K, _CLONE[machine], 0, 4), _op(_LD_W_ABS, _ARG0),
            _op(_JSET_K, CLONE_NEW, 0, 1), _op(_RET_K, eperm), _op(_RET_K, _ALLOW),
            _op(_RET_K, _ALLOW)]
    return b"".join(out)


def _socket_families(machine: str) -> list[bytes]:
    """socket and socketpair: allowed for :data:`SOCKET_FAMILIES`, EAFNOSUPPORT for any
    other family (the accumulator holds the call's number on entry). The family is an
    int: the kernel reads the low half of the argument, as this does."""
    families = sorted(SOCKET_FAMILIES)
    n = len(families)
    out: list[bytes] = []
    for nr in _SOCKET[machine]:
        out += [_op(_JEQ_K, nr, 0, n + 3), _op(_LD_W_ABS, _ARG0)]
        out += [_op(_JEQ_K, family, n - i, 0) for i, family in enumerate(families)]
        out += [_op(_RET_K, _ERRNO | errno.EAFNOSUPPORT), _op(_RET_K, _ALLOW)]
    return out


def program_fd(machine: str | None = None) -> int | None:
    """A file descriptor holding the filter, at its start (a memory file: bubblewrap
    reads it to its end), or None without a filter. The caller closes it."""
    code = program(machine)
    if code is None:
        return None
    fd = os.memfd_create("chinchon-seccomp", 0)
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
