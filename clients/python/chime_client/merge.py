"""The k-way merge of shards' list pages (`PageMerge.swift`), pure."""

from __future__ import annotations


def all_done(positions: dict) -> bool:
    return all(position is True for position in positions.values())


def merge(pages: list, limit: int) -> tuple[list, dict]:
    """The k-way merge of `PageMerge.swift`: pages [(shard, [(key, item)], frontier or None)]
    → (items of the page, shard → next position: key bytes or True for done)."""
    frontiers = [frontier for _, _, frontier in pages if frontier is not None]
    lowest = min(frontiers) if frontiers else None
    eligible = sorted((entry for _, items, _ in pages for entry in items if lowest is None or entry[0] <= lowest),
                      key=lambda entry: entry[0])
    cut = len(eligible) > limit
    taken = eligible[:limit]
    boundary = taken[-1][0] if cut else lowest
    following = {}
    for shard, items, frontier in pages:
        if boundary is None:
            following[shard] = True
        elif frontier is None and (not items or items[-1][0] <= boundary):
            following[shard] = True
        elif frontier is not None and frontier <= boundary:
            following[shard] = frontier
        else:
            following[shard] = boundary
    return [item for _, item in taken], following
