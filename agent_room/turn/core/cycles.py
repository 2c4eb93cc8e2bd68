"""Cycles among agents: A -> B -> ... -> A, for handovers (seed 002) and the loop breaker.

A handover that hands work back to someone already upstream of its sender starts a loop
in which agents pass the same work around; the operator should see that before approving.
The fleet-wide loop breaker (``core.loops``) searches the same way over the edges busy
with messages. Pure and standard library only: the caller chooses which edges count.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

MAX_DEPTH = 8
"""Longest chain searched, as the seed's ``maxDepth``: longer loops are not worth a badge."""


def find_path(
    graph: Mapping[str, Iterable[str]], start: str, end: str, max_depth: int = MAX_DEPTH
) -> tuple[str, ...] | None:
    """The shortest path ``start -> ... -> end`` along ``graph``'s edges (BFS), if any."""
    return search(lambda node: graph.get(node, ()), start, end, max_depth)


def search(
    neighbours: Callable[[str], Iterable[str]], start: str, end: str, max_depth: int = MAX_DEPTH
) -> tuple[str, ...] | None:
    """``find_path`` over a graph known only by ``neighbours(node)``: the loop breaker asks
    the store for a node's busy edges as the search reaches it, not for the whole room."""
    queue: deque[tuple[str, ...]] = deque([(start,)])
    seen = {start}
    while queue:
        path = queue.popleft()
        current = path[-1]
        if current == end:
            return path
        if len(path) > max_depth:
            continue
        for neighbour in sorted(neighbours(current)):
            if neighbour not in seen:
                seen.add(neighbour)
                queue.append((*path, neighbour))
    return None


def closes_cycle(
    earlier: Iterable[tuple[str, str]], sender: str, recipient: str, max_depth: int = MAX_DEPTH
) -> tuple[str, ...] | None:
    """The cycle ``sender -> recipient -> ... -> sender`` this handover would close, if any.

    ``earlier`` holds (sender, recipient) pairs of the other recent handovers. The
    result starts and ends with ``sender``, e.g. ``("a", "b", "c", "a")``.
    """
    if sender == recipient:
        return (sender, sender)
    graph: dict[str, set[str]] = {}
    for source, target in earlier:
        graph.setdefault(source, set()).add(target)
    back = find_path(graph, recipient, sender, max_depth)
    return None if back is None else (sender, *back)


def cycle_warnings(
    pending: Sequence[tuple[int, str, str]],
    recent: Sequence[tuple[int, str, str]],
    max_depth: int = MAX_DEPTH,
) -> dict[int, tuple[str, ...]]:
    """For each pending handover (id, sender, recipient), the cycle it closes, if any.

    ``recent`` holds the recent handovers that count (pending ones included). A
    handover is checked against the ones before it (lower ids): the badge goes on the
    one that closes the loop, not on every handover the loop runs through.
    """
    found: dict[int, tuple[str, ...]] = {}
    for handover_id, sender, recipient in pending:
        others = [(s, r) for i, s, r in recent if i < handover_id]
        cycle = closes_cycle(others, sender, recipient, max_depth)
        if cycle is not None:
            found[handover_id] = cycle
    return found


def cycle_edges(cycle: Sequence[str]) -> set[tuple[str, str]]:
    """The (sender, recipient) steps of a cycle ``(a, b, c, a)``."""
    return set(pairwise(cycle))


def render_cycle(cycle: Sequence[str]) -> str:
    """``@a → @b → @a``: how a cycle reads in a badge, a notice or a warning."""
    return " → ".join(f"@{name}" for name in cycle)
