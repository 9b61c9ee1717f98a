"""Protobuf's base-128 varints and field keys, as bytes (for the fast encoder)."""

from __future__ import annotations


def encode_varint(n: int) -> bytes:
    """The varint of ``n``, computed; a negative int32/int64 takes ten bytes (two's
    complement). :func:`varint` is the same, from a table for small numbers."""
    if n < 0:
        n += 1 << 64
    if n < 1 << 21:
        if n < 1 << 14:
            return bytes((n & 127 | 128, n >> 7)) if n >= 128 else bytes((n,))
        return bytes((n & 127 | 128, n >> 7 & 127 | 128, n >> 14))
    if n < 1 << 28:
        return bytes((n & 127 | 128, n >> 7 & 127 | 128, n >> 14 & 127 | 128, n >> 21))
    out = bytearray()
    while n >= 128:
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


#: ``SMALL[n]`` is the varint of ``n`` for every ``0 <= n < SMALL_LIMIT`` (every one- and
#: two-byte varint): the hot path indexes it directly.
SMALL_LIMIT = 1 << 14
SMALL: list[bytes] = [encode_varint(n) for n in range(SMALL_LIMIT)]


def varint(n: int) -> bytes:
    """Protobuf base-128 varint; a negative int32/int64 takes ten bytes (two's complement)."""
    return SMALL[n] if 0 <= n < SMALL_LIMIT else encode_varint(n)


def key(field: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type, as protobuf writes it before the value."""
    return varint(field << 3 | wire_type)


def delimited(field: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes or an embedded message."""
    n = len(payload)
    return key(field, 2) + (SMALL[n] if n < SMALL_LIMIT else encode_varint(n)) + payload


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    """The varint that starts at ``buf[i]``, and the index after it. Raises IndexError
    when ``buf`` ends inside it, ValueError when it runs past ten bytes."""
    value = 0
    shift = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 127) << shift
        if b < 128:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than ten bytes")


def length_prefixed(field_key: bytes, payload: bytes) -> bytes:
    """A length-delimited field whose key (from :mod:`chinchon.wire.tags`) is given."""
    n = len(payload)
    return field_key + (SMALL[n] if n < SMALL_LIMIT else encode_varint(n)) + payload
