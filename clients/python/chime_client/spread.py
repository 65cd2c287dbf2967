"""The spread delay of a firing, as the coordinator computes it (Trigger+Spread.swift).

A trigger with "spread" S fires each occurrence a delay in [0, S) after its nominal instant:

    h     = fmix32(crc32c(UTF-8 of the nominal firing id))
    delay = floor(h * floor(S * 1000) / 2**32) milliseconds

where the nominal firing id is "<recipient>/<id>@<instant less remind-before>" with three
fractional digits and Z, and fmix32 is MurmurHash3's 32-bit finaliser. Pinned against the
Swift values: "alice/standup@2026-12-24T08:00:00.000Z" with S = 900 → 338752 ms.
"""

from __future__ import annotations

from .slots import crc32c

_MASK = 0xFFFFFFFF


def spread_hash(nominal_firing_id: str) -> int:
    """fmix32(CRC-32C) of the nominal firing id's UTF-8 bytes."""
    h = crc32c(nominal_firing_id.encode())
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def spread_delay_ms(nominal_firing_id: str, spread_s: float) -> int:
    """The delay in whole milliseconds that a spread of `spread_s` seconds (at most a day) gives."""
    bound = int(max(0.0, min(spread_s, 86_400.0)) * 1000)
    return (spread_hash(nominal_firing_id) * bound) >> 32
