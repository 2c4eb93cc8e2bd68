"""``HandoverQueue`` and ``HandoverPreview``: the handovers waiting for the operator.

The queue lists them oldest first with a badge on any that would close a cycle; the
preview renders the highlighted one's body as Markdown under its cycle warning. Deciding
is the app's job (``a`` / ``r``); these widgets only show and select.
"""

from __future__ import annotations

import sys

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive, var
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_room.core.snapshot import HandoverRow, RoomSnapshot
from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.printable import printable
from agent_room.ui.escaped import Escaped


class HandoverQueue(OptionList):
    """Pending handovers; the highlighted one is the one ``a`` and ``r`` decide."""

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    class Highlighted(Message):
        """Another handover (or none) is highlighted."""

        def __init__(self, queue: HandoverQueue, handover: HandoverRow | None) -> None:
            self.queue = queue
            self.handover = handover
            """The handover now highlighted."""
            super().__init__()

        @property
        def control(self) -> HandoverQueue:
            """The queue that changed."""
            return self.queue

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: tuple[HandoverRow, ...] = ()
        """The handovers listed, in order."""
        self.border_title = "Handovers 0 pending"

    @property
    def selected(self) -> HandoverRow | None:
        """The highlighted handover."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.rows):
            return None
        return self.rows[index]

    def watch_snapshot(self) -> None:
        """Rebuild the list when the pending handovers change."""
        rows = self.snapshot.handovers if self.snapshot else ()
        title = f"Handovers {len(rows)} pending"  # also when none ever was
        if self.border_title != title:  # setting it repaints the list, even to the same
            self.border_title = title
        if rows == self.rows:
            return
        current = self.selected.id if self.selected else None
        self.rows = rows
        self.clear_options()
        badge = self.app.theme_variables.get("cycle-badge", "red")
        for row in rows:
            prompt = Text.assemble((f"#{row.id} ", "bold"), f"@{row.sender} → @{row.recipient}")
            if row.cycle:
                prompt.append("  ⚠ cycle", style=f"bold {badge}")
            self.add_option(Option(prompt, id=str(row.id)))
        ids = [r.id for r in rows]
        if rows:
            self.highlighted = ids.index(current) if current in ids else 0
        self.post_message(self.Highlighted(self, self.selected))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Tell the preview."""
        event.stop()
        self.post_message(self.Highlighted(self, self.selected))


class HandoverPreview(VerticalScroll):
    """The highlighted handover: a cycle warning, then its body as Markdown (rendered by
    Rich into one widget: the preview changes often and a widget per block costs), shown
    with what a terminal would act on escaped.

    The first body is drawn just after the frame that shows the route, so the console's
    first paint never waits for the Markdown renderer to load.
    """

    handover: reactive[HandoverRow | None] = reactive(None)
    """The handover shown."""

    def compose(self) -> ComposeResult:
        """A warning line and the body."""
        yield Static(id="cycle-warning")
        yield Static(id="handover-code")
        yield Static(id="handover-body")

    def watch_handover(self, handover: HandoverRow | None) -> None:
        """Show another handover."""
        warning = self.query_one("#cycle-warning", Static)
        body = self.query_one("#handover-body", Static)
        if "rich.markdown" in sys.modules:
            self._show_body()
        else:  # the first time: after this frame, which shows everything else
            body.update("")
            self.call_after_refresh(self._show_body)
        code = self.query_one("#handover-code", Static)
        code.display = bool(handover and handover.code)
        if handover is not None and handover.code:  # its files, and whether it merges
            style = "bold" if "CONFLICTS" not in handover.code else "bold red"
            lines = printable(handover.code, multiline=True).split("\n")
            code.update(Text.assemble((lines[0], style), *("\n" + line for line in lines[1:])))
        if handover is None:
            warning.update("")
            warning.display = False
            self.border_title = "Preview"
            return
        warning.display = handover.cycle is not None
        if handover.cycle:
            warning.update(f"⚠ closes a cycle: {render_cycle(handover.cycle)}")
        self.border_title = f"#{handover.id} @{handover.sender} → @{handover.recipient}"

    def _show_body(self) -> None:
        """The body of the handover shown now, as Markdown."""
        from rich.markdown import Markdown  # 16 ms: when a handover is first shown

        handover = self.handover
        text = handover.body if handover is not None else "*No handover is waiting.*"
        if handover is not None:
            context = handover.context or "*Context from the sender's transcript: preparing.*"
            text += f"\n\n---\n\n{context}"
        # escaped before the layout (so lines wrap right) and after the rendering (which
        # decodes entities such as &#27; into the very characters escaped before)
        markdown = Markdown(printable(text, multiline=True))
        self.query_one("#handover-body", Static).update(Escaped(markdown))
