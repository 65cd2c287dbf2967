"""Which shard owns a recipient: the slot function of `ShardMap` (Sources/ChimeWire/Sharding).

slot = CRC-32C (Castagnoli, RFC 3720 §B.4: reflected polynomial 0x82F63B78, initial value
and final XOR 0xFFFFFFFF) of the recipient's UTF-8 bytes, modulo the map's `slotCount`
(4096 by default). Pinned against the Swift values: alice → 654, bob → 1748,
"123456789" → 643, "" → 0.
"""

from __future__ import annotations

DEFAULT_SLOT_COUNT = 4096


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    """CRC-32C of `data` (the check value of b"123456789" is 0xE3069283)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def slot_of(recipient: str, slot_count: int = DEFAULT_SLOT_COUNT) -> int:
    """The recipient's slot: CRC-32C of its UTF-8 bytes modulo `slot_count`."""
    return crc32c(recipient.encode("utf-8")) % max(1, slot_count)


def shard_of(shard_map: dict, recipient: str) -> int | None:
    """The id of the shard of `shard_map` (the `map` reply's result) owning the recipient's slot."""
    slot = slot_of(recipient, shard_map.get("slotCount", DEFAULT_SLOT_COUNT))
    for shard in shard_map["shards"]:
        if any(first <= slot <= last for first, last in shard["slots"]):
            return shard["id"]
    return None
