"""The cluster cursor: one position per shard (`ClusterCursor` in Sources/ChimeClient/Cluster).

Wire form: base64url without padding of 0x53 ('S'), the listing's kind byte (0x4C list,
0x44 dead letters), the map epoch (LEB128), the count of positions (LEB128), then per
position the shard id (LEB128), a state byte (0 from the start, 1 after a key, 2 done) and,
for state 1, the key's length (LEB128) and bytes. The same text works in Swift and Python.
"""

from __future__ import annotations

import base64

MARKER = 0x53
LIST = 0x4C
DEAD_LETTERS = 0x44
START, AFTER, DONE = 0, 1, 2
MAXIMUM_SHARDS = 4096


class CursorError(ValueError):
    """A cursor that is not one this client made (`invalid_argument`, field `cursor`)."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    if any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in text) or len(text) % 4 == 1:
        raise CursorError("the cursor is not valid")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(kind: int, map_epoch: int, positions: dict) -> str:
    """`positions`: shard id → None (start), bytes (after that key) or True (done)."""
    out = bytearray([MARKER, kind]) + _varint(map_epoch) + _varint(len(positions))
    for shard in sorted(positions):
        out += _varint(shard)
        position = positions[shard]
        if position is None:
            out.append(START)
        elif position is True:
            out.append(DONE)
        else:
            out.append(AFTER)
            out += _varint(len(position)) + bytes(position)
    return b64url(bytes(out))


def decode(text: str, kind: int) -> tuple[int, dict]:
    """(map epoch, positions); raises CursorError for anything else."""
    data = unb64url(text)
    index = 0

    def byte() -> int:
        nonlocal index
        if index >= len(data):
            raise CursorError("the cursor is cut short")
        index += 1
        return data[index - 1]

    def varint() -> int:
        value = 0
        for shift in range(0, 70, 7):
            part = byte()
            value |= (part & 0x7F) << shift
            if not part & 0x80:
                return value
        raise CursorError("the cursor has a number too long")

    if byte() != MARKER:
        raise CursorError("the cursor is not a cluster cursor")
    if byte() != kind:
        raise CursorError("the cursor belongs to another listing")
    epoch = varint()
    count = varint()
    if not 1 <= count <= MAXIMUM_SHARDS:
        raise CursorError(f"the cursor names {count} shards")
    positions: dict = {}
    for _ in range(count):
        shard = varint()
        if shard >= MAXIMUM_SHARDS or shard in positions:
            raise CursorError(f"the cursor names shard {shard} twice or out of range")
        state = byte()
        if state == START:
            positions[shard] = None
        elif state == DONE:
            positions[shard] = True
        elif state == AFTER:
            length = varint()
            if length > len(data) - index:
                raise CursorError("the cursor is cut short")
            positions[shard] = data[index:index + length]
            index += length
        else:
            raise CursorError(f"the cursor has an unknown position state {state}")
    if index != len(data):
        raise CursorError("the cursor has bytes left over")
    return epoch, positions


def shard_cursor(kind: int, key: bytes) -> str:
    """A shard's own cursor after `key` (the coordinator's PageCursor)."""
    return b64url(bytes([kind]) + key)


def shard_cursor_key(text: str, kind: int) -> bytes:
    """The key of a shard's own cursor."""
    data = unb64url(text)
    if not data or data[0] != kind:
        raise CursorError("a shard's cursor is not of its listing")
    return data[1:]
