"""What the other end of a connection speaks, TLS or plaintext, and what to tell a
client that dialled it the other way.

gRPC reports a plaintext channel to a TLS server as ``UNAVAILABLE: Socket closed`` and
the reverse as a failed handshake, both "failed to connect", as if the server were down.
When a call fails that way, :func:`tls_mismatch` asks the server itself: it opens one
TCP connection (or a unix socket), sends a TLS ClientHello and reads the first bytes of
the answer. A TLS server answers with a TLS record (a handshake, or an alert: both
begin with a record type and major version 3); anything else, or a closed connection,
is not TLS. Nothing is verified or kept: it is a diagnosis, after a failure, in the
standard library only (the admin CLI and the Python SDK share it).
"""

from __future__ import annotations

import socket
import ssl

#: The first bytes of a TLS record: handshake (22) or alert (21), then major version 3.
_TLS_RECORDS = (b"\x16\x03", b"\x15\x03")
#: What a client with the wrong credentials is told.
SPEAKS_TLS = "the server speaks TLS: add --root-cert (or --tls)"
SPEAKS_PLAINTEXT = "the server speaks plaintext (no TLS): leave out --root-cert and --tls"


def _client_hello(host: str) -> bytes:
    """A TLS ClientHello (as a client would send first), from the standard library."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_name = host if host and not host.replace(".", "").isdigit() and ":" not in host else None
    conn = ctx.wrap_bio(incoming, outgoing, server_hostname=server_name)
    try:
        conn.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def _connect(target: str, timeout: float) -> tuple[socket.socket, str] | None:
    """A connected socket to a gRPC target (``HOST:PORT``, ``[IPv6]:PORT``,
    ``unix:PATH``, ``dns:///HOST:PORT``) and its host name; None if it cannot be."""
    if target.startswith("unix:"):
        path = target.removeprefix("unix:").removeprefix("//")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            return None
        return sock, ""
    address = target.split("///", 1)[-1] if target.startswith(("dns:", "ipv4:", "ipv6:")) else target
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return None
    host = host.strip("[]") or "localhost"
    try:
        return socket.create_connection((host, int(port)), timeout), host
    except OSError:
        return None


def speaks_tls(target: str, timeout: float = 2.0) -> bool | None:
    """True when the server at ``target`` answers a TLS ClientHello with TLS, False when
    it answers otherwise or closes the connection, None when it cannot be reached (or
    says nothing within ``timeout`` seconds)."""
    found = _connect(target, timeout)
    if found is None:
        return None
    sock, host = found
    with sock:
        try:
            sock.sendall(_client_hello(host))
            head = b""
            while len(head) < 2:
                chunk = sock.recv(2 - len(head))
                if not chunk:
                    return False  # closed without a TLS answer
                head += chunk
        except TimeoutError:
            return None
        except OSError:
            return False  # reset: what a plaintext HTTP/2 server does with a ClientHello
    return head in _TLS_RECORDS


def tls_mismatch(target: str, using_tls: bool, timeout: float = 2.0) -> str | None:
    """What to tell a client whose channel to ``target`` failed, when the reason is that
    it dialled TLS to a plaintext server or the reverse; None otherwise (the server is
    down, or speaks what the client does)."""
    tls = speaks_tls(target, timeout)
    if tls is True and not using_tls:
        return SPEAKS_TLS
    if tls is False and using_tls:
        return SPEAKS_PLAINTEXT
    return None
