"""The system-call filter's program (launch/seccomp.py), run for each architecture it
knows by a small classic-BPF interpreter over ``struct seccomp_data``: the verdicts of
the socket-family rule and of the rules around it, on x86_64 and on aarch64 alike
(tests/launch/test_sandbox.py runs the real filter in the kernel on this machine)."""

from __future__ import annotations

import errno
import socket
import struct

from chinchon_referee.launch.seccomp import SOCKET_FAMILIES, program
from hypothesis import given
from hypothesis import strategies as st

ALLOW, KILL, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SOCKET = {"x86_64": (41, 53), "aarch64": (198, 199)}  # socket, socketpair
#: Calls the filter leaves alone (read, write, openat, connect, mmap) per architecture.
PLAIN = {"x86_64": (0, 1, 257, 42, 9), "aarch64": (63, 64, 56, 203, 222)}


def run(code: bytes, arch: int, nr: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """What the filter returns for one call (the interpreter knows the instructions
    the filter uses: ld [k], jeq/jge/jset #k, ret #k)."""
    data = struct.pack("<iI", nr, arch) + struct.pack("<Q", 0) + \
        struct.pack("<6Q", *(a & 0xFFFFFFFFFFFFFFFF for a in args))
    ops = [struct.unpack_from("<HBBI", code, i) for i in range(0, len(code), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = ops[pc]
        if op == 0x20:  # ld w abs
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset with k
            hit = acc == k if op == 0x15 else acc >= k if op == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"an instruction the filter should not hold: {op:#x}")


FAMILY = st.integers(0, 2**32 - 1) | st.sampled_from(
    [socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET, 40, 31, 44])
MACHINE = st.sampled_from(sorted(ARCH))


@given(MACHINE, FAMILY, st.integers(0, 2**32 - 1), st.booleans())
def test_socket_and_socketpair_of_any_family_but_unix_get_eafnosupport(
    machine: str, family: int, high: int, pair: bool,
) -> None:
    """The kernel reads a family as an int (the argument's low half): garbage in the
    high half changes nothing."""
    code = program(machine)
    assert code is not None
    nr = SOCKET[machine][pair]
    got = run(code, ARCH[machine], nr, (family | high << 32, 1, 0, 0, 0, 0))
    want = ALLOW if family in SOCKET_FAMILIES else ERRNO | errno.EAFNOSUPPORT
    assert got == want, (machine, family, hex(got))


@given(MACHINE)
def test_unix_sockets_and_plain_calls_are_allowed_and_other_rules_hold(machine: str) -> None:
    code = program(machine)
    assert code is not None and set(SOCKET_FAMILIES) == {socket.AF_UNIX}
    arch = ARCH[machine]
    for nr in SOCKET[machine]:
        assert run(code, arch, nr, (socket.AF_UNIX, 1, 0, 0, 0, 0)) == ALLOW
    for nr in PLAIN[machine]:
        assert run(code, arch, nr) == ALLOW
    ptrace = {"x86_64": 101, "aarch64": 117}[machine]
    assert run(code, arch, ptrace) == ERRNO | errno.EPERM
    assert run(code, 0x40000003, SOCKET[machine][0], (socket.AF_INET,) * 6) == KILL  # i386
    if machine == "x86_64":  # x32's socket call
        assert run(code, arch, 0x40000000 + 41, (socket.AF_INET,) * 6) == ERRNO | errno.EPERM
