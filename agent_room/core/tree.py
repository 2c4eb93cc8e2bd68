"""The session tree: who descends from whom, with Claude's subagents as leaves.

Pure: built from session and subagent rows (plain mappings). Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_room.turn.core.printable import printable


@dataclass(slots=True)
class TreeNode:
    """One node: a session (with children) or a subagent (always a leaf)."""

    label: str
    session_id: str | None
    state: str
    depth: int
    kind: str = "session"
    """``session`` or ``subagent``."""
    children: list[TreeNode] = field(default_factory=list)
    host: str | None = None
    """The machine a session runs on (a room across machines)."""
    branch: str | None = None
    """A session in a worktree of its own: its branch, ahead/behind, uncommitted files."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, children nested."""
        return {
            "label": self.label,
            "session_id": self.session_id,
            "state": self.state,
            "depth": self.depth,
            "kind": self.kind,
            "host": self.host,
            "branch": self.branch,
            "children": [c.as_dict() for c in self.children],
        }


def intercom_label(row: Mapping[str, Any]) -> str:
    """An intercom session in the tree: where it asks, its topic, cost and turns."""
    turns = int(row.get("turns") or 0)
    return (
        f"ask @{row['label']}: {printable(str(row['topic']))}"
        f" (${float(row.get('cost_usd') or 0):.4f},"
        f" {turns} turn{'' if turns == 1 else 's'})"
    )


def build_tree(
    sessions: Iterable[Mapping[str, Any]],
    subagents: Iterable[Mapping[str, Any]] = (),
    intercom: Iterable[Mapping[str, Any]] = (),
) -> list[TreeNode]:
    """Roots in start order; a session whose parent is unknown (or a cycle) is a root.

    An intercom session (``agent-room ask``) hangs under the session that asked; its
    node is the registered session when its hooks registered it, else a node of its own.
    """
    nodes: dict[str, TreeNode] = {}
    parents: dict[str, str | None] = {}
    order: list[str] = []
    for row in sessions:
        sid = row.get("session_id") or f"name:{row['name']}"
        nodes[sid] = TreeNode(
            label=str(row["name"]),
            session_id=row.get("session_id"),
            state=str(row["state"]),
            depth=0,
            host=row.get("host"),
        )
        parents[sid] = row.get("parent")
        order.append(sid)
    for row in sorted(intercom, key=lambda r: float(r["created_at"])):
        sid = str(row["session_id"])
        node = nodes.get(sid)
        if node is None:
            node = nodes[sid] = TreeNode(label="", session_id=sid, state="ended", depth=0)
            order.append(sid)
        node.label = intercom_label(row)
        node.kind = "intercom"
        parents[sid] = str(row["parent"])
    roots: list[TreeNode] = []
    for sid in order:
        parent = parents[sid]
        if parent in nodes and not _reaches(parents, parent, sid):
            nodes[parent].children.append(nodes[sid])
        else:
            roots.append(nodes[sid])
    for sub in subagents:
        owner = nodes.get(str(sub["session_id"]))
        if owner is not None:
            label = f"{sub.get('agent_type') or 'subagent'} {str(sub['agent_id'])[:8]}"
            owner.children.append(
                TreeNode(label=label, session_id=None, state="ended", depth=0, kind="subagent")
            )
    for root in roots:
        _set_depth(root, 0)
    return roots


def _reaches(parents: Mapping[str, str | None], start: str | None, target: str) -> bool:
    seen: set[str] = set()
    while start is not None and start not in seen:
        if start == target:
            return True
        seen.add(start)
        start = parents.get(start)
    return False


def _set_depth(node: TreeNode, depth: int) -> None:
    node.depth = depth
    for child in node.children:
        _set_depth(child, depth + 1)


def render_tree(roots: Iterable[TreeNode]) -> str:
    """Draw the tree with box characters, one node a line."""
    lines: list[str] = []
    roots = list(roots)
    hosts: set[str | None] = set()

    def gather(node: TreeNode) -> None:
        if node.kind == "session":
            hosts.add(node.host)
        for child in node.children:
            gather(child)

    for root in roots:
        gather(root)
    several = len(hosts) > 1  # a room across machines: each session says where

    def walk(node: TreeNode, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└── " if last else "├── ")
        marker = f"({node.kind})" if node.kind == "subagent" else f"[{node.state}]"
        where = f" on {node.host or '?'}" if several and node.kind == "session" else ""
        code = f" ⎇ {node.branch}" if node.branch else ""
        lines.append(f"{prefix}{branch}{node.label} {marker}{where}{code}")
        child_prefix = prefix if top else prefix + ("    " if last else "│   ")
        for index, child in enumerate(node.children):
            walk(child, child_prefix, index == len(node.children) - 1, False)

    for root in roots:
        walk(root, "", True, True)
    return "\n".join(lines) + ("\n" if lines else "")
