"""Finding the clusters of notes worth distilling: pure functions over ids, tags and edges.

The link graph restricted to the candidate notes is read as an undirected adjacency map; its
connected components are found by BFS. With `requireSharedTag`, a component is trimmed to the
members carrying its majority tag, and the members it drops are grouped again the same way
(their own components and majority tags), so a large component of mixed topics yields one
cluster per topic instead of hiding all but one. Clusters smaller than `minClusterSize` are
dropped; one larger than `maxClusterSize` is cut into pieces in BFS order (neighbours stay
together), and a piece smaller than `minClusterSize` waits for more notes.
"""

import hashlib
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Cluster:
    note_ids: tuple[int, ...]  # BFS order from the best-connected member
    tag: str  # the tag every member carries ("" when requireSharedTag is off and none is shared)

    @property
    def signature(self) -> str:
        """Stable across ticks while the members stay the same."""
        return hashlib.sha256(",".join(map(str, sorted(self.note_ids))).encode()).hexdigest()


def adjacency(node_ids: Iterable[int], edges: Iterable[tuple[int, int]]) -> dict[int, set[int]]:
    """Undirected adjacency over `node_ids`; edges with an end outside them are ignored."""
    graph: dict[int, set[int]] = {node: set() for node in node_ids}
    for a, b in edges:
        if a != b and a in graph and b in graph:
            graph[a].add(b)
            graph[b].add(a)
    return graph


def components(graph: dict[int, set[int]], members: Iterable[int] | None = None) -> list[list[int]]:
    """Connected components of `graph` (of its subgraph induced by `members`, when given), each
    in BFS order starting from its best-connected member (ties: the lowest id)."""
    allowed = set(graph) if members is None else {node for node in members if node in graph}
    degree = {node: len(graph[node] & allowed) for node in allowed}
    seen: set[int] = set()
    found = []
    for start in sorted(allowed, key=lambda n: (-degree[n], n)):
        if start in seen:
            continue
        seen.add(start)
        order, queue = [], deque([start])
        while queue:
            node = queue.popleft()
            order.append(node)
            for neighbour in sorted(graph[node] & allowed):
                if neighbour not in seen:
                    seen.add(neighbour)
                    queue.append(neighbour)
        found.append(order)
    return found


def majority_tag(members: Iterable[int], tags: dict[int, list[str]]) -> str:
    """The tag most members carry (ties: alphabetical), or "" when none has a tag."""
    counts = Counter(tag for node in members for tag in set(tags.get(node, ())))
    if not counts:
        return ""
    return min(counts, key=lambda tag: (-counts[tag], tag))


def _pieces(order: list[int], tag: str, *, min_size: int, max_size: int) -> list[Cluster]:
    pieces = [order[i : i + max_size] for i in range(0, len(order), max_size)]
    return [Cluster(tuple(piece), tag) for piece in pieces if len(piece) >= min_size]


def find_clusters(
    graph: dict[int, set[int]],
    tags: dict[int, list[str]],
    *,
    min_size: int,
    max_size: int,
    require_shared_tag: bool,
) -> list[Cluster]:
    """Every cluster in the graph, biggest first (ties: the one with the oldest note first)."""
    max_size = max(max_size, min_size, 1)
    clusters: list[Cluster] = []
    pending = deque(components(graph))
    while pending:
        component = pending.popleft()
        if len(component) < min_size:
            continue
        tag = majority_tag(component, tags)
        if not require_shared_tag:
            clusters += _pieces(component, tag, min_size=min_size, max_size=max_size)
            continue
        if not tag:
            continue
        kept = [node for node in component if tag in tags.get(node, ())]
        clusters += _pieces(kept, tag, min_size=min_size, max_size=max_size)
        rest = [node for node in component if tag not in tags.get(node, ())]
        if len(rest) >= min_size:
            pending.extend(components(graph, rest))
    clusters.sort(key=lambda c: (-len(c.note_ids), min(c.note_ids)))
    return clusters
