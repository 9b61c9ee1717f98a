"""A hostile bot: what a stranger's submission might try, one attack per run.

    python hostile_bot.py ATTACK [ARG...] --target T

Each attack prints what it found as ``RESULT <json>`` lines on stdout and exits 0 when
it was stopped (or is killed). tests/launch/test_sandbox.py runs it inside the sandbox."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import socket
import sys
import time


def say(**what: object) -> None:
    print("RESULT " + json.dumps(what), flush=True)


def net(host: str, port: str) -> None:
    for where in ((host, int(port)), ("1.1.1.1", 53), ("8.8.8.8", 443)):
        try:
            socket.create_connection(where, timeout=3).close()
            say(where=list(where), reached=True)
        except OSError as e:
            say(where=list(where), reached=False, error=str(e))
    try:
        socket.getaddrinfo("example.com", 80)
        say(where="dns", reached=True)
    except OSError as e:
        say(where="dns", reached=False, error=str(e))


def read(*paths: str) -> None:
    for path in paths:
        try:
            with open(path, "rb") as f:
                say(path=path, read=True, data=f.read(64).decode(errors="replace"))
        except OSError as e:
            say(path=path, read=False, error=str(e))
    say(root=sorted(os.listdir("/")))


def write(*paths: str) -> None:
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write("pwned")
            say(path=path, wrote=True)
        except OSError as e:
            say(path=path, wrote=False, error=str(e))


def fill(path: str) -> None:
    chunk = b"x" * (1024 * 1024)
    written = 0
    try:
        with open(path, "wb") as f:
            while True:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as e:
        say(filled=written, error=str(e))


def fork() -> None:
    children = 0
    try:
        while children < 100_000:
            pid = os.fork()
            if pid == 0:
                time.sleep(600)
                os._exit(0)
            children += 1
    except OSError as e:
        say(forked=children, error=str(e))
        return
    say(forked=children)


def memory() -> None:
    hoard = []
    try:
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))  # touched: bytearray zero-fills
            say(allocated_mb=16 * len(hoard))
    except MemoryError:
        say(allocated_mb=16 * len(hoard), error="MemoryError")


def spin(seconds: str) -> None:
    end = time.monotonic() + float(seconds)
    n = 0
    while time.monotonic() < end:
        n += 1
    say(spun=n)


def escape(outside_pid: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
    say(mount=rc == 0, errno=ctypes.get_errno())
    PTRACE_ATTACH = 16
    rc = libc.ptrace(PTRACE_ATTACH, int(outside_pid), None, None)  # the referee's
    say(ptrace=rc == 0, errno=ctypes.get_errno())
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 2, hard * 2))
        say(raised=True, hard=hard)
    except (ValueError, OSError) as e:
        say(raised=False, hard=hard, error=str(e))
    try:
        os.setuid(12345)
        say(setuid=True)
    except OSError as e:
        say(setuid=False, error=str(e))
    say(environment=sorted(os.environ))
    CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
    rc = libc.unshare(CLONE_NEWUSER | CLONE_NEWNET)  # a nested user namespace
    say(unshare=rc == 0, errno=ctypes.get_errno())
    rc = libc.syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup
    say(io_uring=rc >= 0, errno=ctypes.get_errno())


#: Address families to try, each with a socket type it takes (AF_UNIX last: it must work).
FAMILIES = {"AF_VSOCK": (40, socket.SOCK_STREAM), "AF_INET": (2, socket.SOCK_STREAM),
            "AF_INET6": (10, socket.SOCK_DGRAM), "AF_NETLINK": (16, socket.SOCK_RAW),
            "AF_PACKET": (17, socket.SOCK_DGRAM), "AF_BLUETOOTH": (31, socket.SOCK_STREAM),
            "AF_CAN": (29, socket.SOCK_RAW), "AF_TIPC": (30, socket.SOCK_RDM),
            "AF_ALG": (38, socket.SOCK_SEQPACKET), "AF_XDP": (44, socket.SOCK_RAW),
            "AF_UNIX": (1, socket.SOCK_STREAM)}


def families(vsock_port: str, referee: str, abstract: str) -> None:
    """socket() of each family (through the C library, as any runtime would), a
    socketpair() of AF_INET and of AF_UNIX, a bind to a vsock port the host holds, a
    connection to the referee's Unix socket and one to the host's abstract Unix socket
    ``abstract`` (abstract names belong to a network namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for name, (family, kind) in FAMILIES.items():
        fd = libc.socket(family, kind, 0)
        say(family=name, made=fd >= 0, errno=0 if fd >= 0 else ctypes.get_errno())
        if fd >= 0:
            os.close(fd)
    for name, family in (("AF_INET", 2), ("AF_UNIX", 1)):
        pair = (ctypes.c_int * 2)()
        rc = libc.socketpair(family, socket.SOCK_STREAM, 0, pair)
        say(pair=name, made=rc == 0, errno=0 if rc == 0 else ctypes.get_errno())
    try:  # the host's vsock port space: a port it holds is "in use" here too
        with socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM) as v:
            v.bind((socket.VMADDR_CID_ANY, int(vsock_port)))
            say(vsock_bind=True)
    except OSError as e:
        say(vsock_bind=False, errno=e.errno)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as u:
        u.connect(referee)
        say(referee=True)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as u:
            u.connect("\0" + abstract)
            say(abstract=True)
    except OSError as e:
        say(abstract=False, errno=e.errno)


def trace_own() -> None:
    """ptrace and process_vm_readv of its own child (no one else's is in its PID
    namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    child = os.fork()
    if child == 0:
        time.sleep(600)
        os._exit(0)
    try:
        PTRACE_ATTACH = 16
        rc = libc.ptrace(PTRACE_ATTACH, child, None, None)
        say(ptrace=rc == 0, errno=0 if rc == 0 else ctypes.get_errno())
        buf = ctypes.create_string_buffer(8)
        iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
        rc = libc.process_vm_readv(child, iov, 1, iov, 1, 0)  # its own address: mapped there too
        say(process_vm_readv=rc >= 0, errno=0 if rc >= 0 else ctypes.get_errno())
    finally:
        os.kill(child, 9)
        os.waitpid(child, 0)


def rlimits() -> None:
    """Its limits as the kernel shows them (/proc/self/limits' fixed columns)."""
    with open("/proc/self/limits") as f:
        for line in f.read().splitlines()[1:]:
            say(limit=line[:26].strip(), soft=line[26:47].strip(), hard=line[47:68].strip())


def linger(marker: str) -> None:
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:  # a daemon: a new session, its parent gone
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
        os._exit(0)
    say(daemonized=True)
    time.sleep(600)


def shout() -> None:
    line = ("y" * 1023 + "\n").encode()
    written = 0
    try:
        while written < 4 * 1024 ** 3:
            os.write(2, line * 1024)
            written += len(line) * 1024
    except OSError as e:
        say(shouted=written, error=str(e))


ATTACKS = {f.__name__: f for f in (net, read, write, fill, fork, memory, spin, escape,
                                   families, trace_own, rlimits, linger, shout)}

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--target" in args:
        i = args.index("--target")
        say(target=args[i + 1])
        del args[i:i + 2]
    ATTACKS[args[0]](*args[1:])
