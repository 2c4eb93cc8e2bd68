"""``SessionTree``: who descends from whom; subagents are leaves.

Rebuilt only when the snapshot's tree changes shape; when only states change (the most
common news, a turn starting or ending) the labels are changed in place, which redraws
their lines instead of laying the whole screen out again. Selecting a session node tells
the app through ``SessionChosen`` so the table follows.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual.reactive import var
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from agent_room.core.snapshot import RoomSnapshot, TreeRow
from agent_room.turn.core.printable import printable
from agent_room.ui.messages import SessionChosen

FIRST_NODES = 100
"""Nodes added before the first frame; the rest just after it (only a screenful shows)."""


class SessionTree(Tree[str]):
    """The session tree; a node's data is the session's name (``""`` for a subagent)."""

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("room", id=id)
        self.show_root = False
        self._drawn: tuple[TreeRow, ...] | None = None
        self._later: list[tuple[TreeNode[str], TreeRow]] = []
        """Nodes of the last rebuild still to be added, as a stack (depth first)."""

    def on_mount(self) -> None:
        """Redraw with the new colours when the theme changes."""
        self.watch(self.app, "theme", lambda _t: self._rebuild(force=True), init=False)

    def watch_snapshot(self) -> None:
        """A new room picture."""
        self._rebuild()

    def _label(self, row: TreeRow) -> Text:
        row = replace(row, label=printable(row.label))  # a subagent's label is free text
        if row.kind == "subagent":
            return Text(f"◦ {row.label}", style="dim italic")
        if row.kind == "intercom":
            colour = self.app.theme_variables.get(f"state-{row.state}", "")
            return Text.assemble(("⇢ ", colour), (row.label, "italic"))
        colour = self.app.theme_variables.get(f"state-{row.state}", "")
        label = Text("● ", style=colour)
        label.append(f"@{row.label}")
        label.append(f"  {row.state}", style="dim")
        if row.branch:  # in a worktree of its own
            label.append(f"  ⎇ {printable(row.branch)}", style="dim")
        return label

    def _add(self, limit: int | None) -> None:
        """Add nodes from the stack, depth first, ``limit`` at most (None: all)."""
        stack, added = self._later, 0
        while stack and (limit is None or added < limit):
            parent, row = stack.pop()
            name = row.label if row.kind == "session" else ""
            if row.children:
                node = parent.add(self._label(row), data=name, expand=True)
                stack.extend((node, child) for child in reversed(row.children))
            else:
                parent.add_leaf(self._label(row), data=name)
            added += 1

    def _add_later(self) -> None:
        """Add what a rebuild left for after its frame (at once if needed first)."""
        if self._later:
            self._add(None)
            self.root.expand_all()

    def _rebuild(self, *, force: bool = False) -> None:
        self._add_later()
        snapshot = self.snapshot
        rows = snapshot.tree if snapshot else ()
        if rows == self._drawn and not force:
            return
        if not force and self._drawn is not None and _shape(rows) == _shape(self._drawn):
            self._relabel(list(self.root.children), self._drawn, rows)
            self._drawn = rows
            return
        self._drawn = rows
        line = self.cursor_line
        self.clear()
        self._later = [(self.root, row) for row in reversed(rows)]
        self._add(FIRST_NODES if line < FIRST_NODES else None)  # the cursor's line kept
        self.root.expand_all()
        if self._later:
            self.call_after_refresh(self._add_later)
        self.cursor_line = min(line, max(0, self.last_line))
        count = sum(1 for _ in _walk(rows))
        self.border_title = f"Tree {count}"

    def _relabel(
        self, nodes: list[TreeNode[str]], old: tuple[TreeRow, ...], new: tuple[TreeRow, ...]
    ) -> None:
        for node, before, after in zip(nodes, old, new, strict=True):
            if before == after:
                continue
            if (before.state, before.branch) != (after.state, after.branch):
                node.set_label(self._label(after))
            self._relabel(list(node.children), before.children, after.children)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        """Selecting a session node selects the session."""
        event.stop()
        if event.node.data:
            self.post_message(SessionChosen(event.node.data))


def _shape(rows: tuple[TreeRow, ...]) -> tuple[object, ...]:
    """The tree without its states: what decides whether nodes must be rebuilt."""
    return tuple((r.kind, r.label, r.session_id, _shape(r.children)) for r in rows)


def _walk(rows: tuple[TreeRow, ...]) -> list[TreeRow]:
    found: list[TreeRow] = []
    for row in rows:
        found.append(row)
        found.extend(_walk(row.children))
    return found
