"""``ChangesScreen``: what each agent changed, and one file's diff (``d``).

Per agent its branch (or the plain checkout it shares), then each file it changed with
the lines added and removed; the highlighted file's patch is shown beside, highlighted
by Rich's diff lexer. Agents whose code overlaps are named at the top, before anyone
merges. The screen only shows: the app's code worker hands it a new ``CodeSnapshot``
when an agent's turn ends, and reads a file's patch in a thread when asked
(``DiffWanted``), answering with ``DiffReady``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from agent_room.core.overlaps import CodeSnapshot
from agent_room.core.worktrees import Changes
from agent_room.turn.core.printable import printable

_SEP = "\0"
"""Between an agent's name and a file's path in a row key (neither holds a NUL)."""


class ChangesScreen(Screen[None]):
    """Every agent's changed files; the highlighted one's diff."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,d", "app.pop_screen", "Back"),
    ]
    DEFAULT_CSS = """
    ChangesScreen #changes-body { height: 1fr; }
    ChangesScreen #changed-files { width: 2fr; min-width: 30; border: round $primary; }
    ChangesScreen #diff-view { width: 3fr; border: round $primary; }
    ChangesScreen #overlaps { height: auto; color: $warning; padding: 0 1; }
    """

    code: var[CodeSnapshot | None] = var(None, init=False)
    """Every agent's changes, as the code worker last read them."""

    class DiffWanted(Message):
        """Show ``path`` of ``name``'s changes: the app reads its patch in a thread."""

        def __init__(self, name: str, path: str) -> None:
            self.name = name
            self.path = path
            super().__init__()

    class DiffReady(Message):
        """A file's patch, read."""

        def __init__(self, name: str, path: str, patch: str) -> None:
            self.name = name
            self.path = path
            self.patch = patch
            super().__init__()

    def __init__(self, code: CodeSnapshot | None) -> None:
        super().__init__()
        self._first = code
        self.rows: list[tuple[str, str | None]] = []
        """(agent, file) per table row; the file None on an agent's own row."""
        self.showing: tuple[str, str] | None = None
        """The file whose diff is shown."""
        self.patch = ""
        """The patch shown (or why none is)."""

    def compose(self) -> ComposeResult:
        """Overlaps, then the files beside the diff."""
        yield Header(icon="◎")
        yield Static(id="overlaps")
        with Horizontal(id="changes-body"):
            yield DataTable(id="changed-files", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="diff-view"):
                yield Static(id="diff")
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then the first picture."""
        self.title = "Changes"
        table = self.query_one("#changed-files", DataTable)
        table.add_column("File", key="file")
        table.add_column("+", key="added")
        table.add_column("-", key="removed")
        table.border_title = "What each agent changed"
        self.query_one("#diff-view").border_title = "Diff"
        self.code = self._first
        table.focus()

    def watch_code(self, code: CodeSnapshot | None) -> None:
        """Redraw the files, keeping the cursor on the same row."""
        table = self.query_one("#changed-files", DataTable)
        overlaps = self.query_one("#overlaps", Static)
        current = self.rows[table.cursor_row] if self.rows and table.row_count else None
        table.clear()
        self.rows = []
        if code is None or not code.agents:
            overlaps.update("No agent has changed anything git can see yet.")
            self._show(None, "")
            return
        overlaps.update(Text("\n".join(f"⚠ {o.text()}" for o in code.overlaps)))
        overlaps.display = bool(code.overlaps)
        for changes in code.agents:
            self._add_agent(table, changes)
        if current in self.rows:
            table.move_cursor(row=self.rows.index(current))
        elif len(self.rows) > 1 and self.rows[1][1] is not None:
            table.move_cursor(row=1)  # the first agent's first file

    def _add_agent(self, table: DataTable[Text], changes: Changes) -> None:
        where = changes.state.short() if changes.state else changes.base
        if changes.problem:
            where = changes.problem
        elif not changes.worktree:
            others = ", ".join(f"@{n}" for n in changes.shared_with)
            where = f"plain checkout{', shared with ' + others if others else ''}"
        title = Text.assemble((f"@{changes.name}", "bold"), "  ", (printable(where), "dim"))
        totals = (
            Text(f"+{changes.added}", style="green"),
            Text(f"-{changes.removed}", style="red"),
        )
        table.add_row(title, *totals, key=changes.name)
        self.rows.append((changes.name, None))
        for change in changes.files:
            label = Text(f"  {change.status} {printable(change.path)}", overflow="ellipsis")
            added = Text("bin" if change.binary else f"+{change.added}", style="green")
            removed = Text("" if change.binary else f"-{change.removed}", style="red")
            table.add_row(label, added, removed, key=f"{changes.name}{_SEP}{change.path}")
            self.rows.append((changes.name, change.path))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Ask for the highlighted file's diff."""
        event.stop()
        if not 0 <= event.cursor_row < len(self.rows):
            return
        name, path = self.rows[event.cursor_row]
        if path is None:
            self._show(None, f"@{name}: highlight one of its files to see its diff")
            return
        if self.showing != (name, path):
            self.showing = (name, path)
            self.query_one("#diff-view").border_title = printable(f"@{name} · {path}")
            self.post_message(self.DiffWanted(name, path))

    def on_changes_screen_diff_ready(self, event: ChangesScreen.DiffReady) -> None:
        """Show a patch read for the file still highlighted."""
        if self.showing == (event.name, event.path):
            self._show(event.path, event.patch)

    def _show(self, path: str | None, patch: str) -> None:
        self.patch = patch
        diff = self.query_one("#diff", Static)
        if path is None:
            diff.update(Text(printable(patch), style="dim"))
            return
        syntax = Syntax(
            printable(patch, multiline=True) or "(no textual change)",
            "diff",
            theme="ansi_dark",
            word_wrap=False,
            background_color="default",
        )
        diff.update(syntax)
