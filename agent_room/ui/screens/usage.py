"""``UsageScreen``: what the agents spent, as a plot over time and a table.

The plot is ``textual-plotext``'s widget (Textualize's wrapper of plotext): the cost
per hour of today, or per day of the last 14 days. Below it, the tokens and cost per
agent, model, link or day. The screen knows nothing of the store: it is given a
``load`` function that builds one frozen ``UsageView`` (in a thread worker: it reads
the room), and redraws from each one it gets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual_plotext import PlotextPlot

from agent_room.core.usage import Line, count, money
from agent_room.room.usage_report import SPANS, UsageView
from agent_room.turn.core.printable import printable

BY = ("agent", "model", "link", "day")
"""What the table sums over, in the order ``b`` steps through them."""

Load = Callable[[str, str], UsageView]
"""Builds the picture for (span, by); called in a thread."""


class UsageScreen(Screen[None]):
    """The room's spending: a plot over time, a table by agent, model, link or day."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("b", "next_group", "By…"),
        Binding("t", "next_span", "Span"),
        Binding("R", "reload", "Read again", show=False),
    ]

    view: var[UsageView | None] = var(None, init=False)
    """The picture shown; replaced whole."""
    span: var[str] = var(SPANS[0], init=False)
    """``today`` or ``14 days``."""
    by: var[str] = var(BY[0], init=False)
    """What the table sums over."""

    class Read(Message):
        """A picture, read in a thread."""

        def __init__(self, view: UsageView) -> None:
            self.view = view
            super().__init__()

    def __init__(self, load: Load) -> None:
        super().__init__()
        self.load = load
        """Builds a picture (in a thread)."""

    def compose(self) -> ComposeResult:
        """The plot, the table, what a spent budget holds."""
        yield Header(icon="◎")
        yield PlotextPlot(id="usage-plot")
        yield DataTable(id="usage-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="usage-over")
        yield Footer()

    def on_mount(self) -> None:
        """Read the first picture."""
        self.title = "Usage"
        self.query_one("#usage-table", DataTable).focus()
        self.action_reload()

    def action_reload(self) -> None:
        """Read the room again."""
        self._read(self.span, self.by)

    def action_next_group(self) -> None:
        """Sum the table over the next of agent, model, link and day."""
        self.by = BY[(BY.index(self.by) + 1) % len(BY)]
        self.action_reload()

    def action_next_span(self) -> None:
        """Today by the hour, or the last 14 days by the day."""
        self.span = SPANS[(SPANS.index(self.span) + 1) % len(SPANS)]
        self.action_reload()

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False)
    def _read(self, span: str, by: str) -> None:
        """Build the picture away from the event loop, then show it."""
        self.post_message(self.Read(self.load(span, by)))

    def on_usage_screen_read(self, message: Read) -> None:
        """Show the picture read."""
        self.view = message.view

    def watch_view(self, view: UsageView | None) -> None:
        """Draw a new picture."""
        if view is None:
            return
        spent = money(view.total.cost_usd, known=view.total.cost_known)
        self.sub_title = f"{view.span} · by {view.by} · {spent}"
        self._plot(view)
        self._table(view)
        over = self.query_one("#usage-over", Static)
        over.update("\n".join(printable(line) for line in view.over))
        over.display = bool(view.over)

    def _plot(self, view: UsageView) -> None:
        widget = self.query_one("#usage-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        labels = [label for label, _ in view.series]
        plt.bar(labels, [cost for _, cost in view.series], color="orange")
        plt.title(f"Cost per {'hour (UTC)' if view.span == 'today' else 'day'} · {view.span}")
        plt.ylabel("USD")
        widget.refresh()

    def _table(self, view: UsageView) -> None:
        table: DataTable[Text] = self.query_one("#usage-table", DataTable)
        table.clear(columns=True)
        for label in (view.by.upper(), "REQUESTS", "INPUT", "OUTPUT", "CACHE R/W", "COST"):
            table.add_column(label, key=label)
        for line in (*view.lines, view.total):
            table.add_row(*_cells(line))


def _cells(line: Line) -> tuple[Text, ...]:
    tokens = line.tokens
    return (
        Text(printable(line.key), overflow="ellipsis", no_wrap=True),
        Text(str(line.requests), justify="right"),
        Text(count(tokens.input), justify="right"),
        Text(count(tokens.output), justify="right"),
        Text(f"{count(tokens.cache_read)}/{count(tokens.cache_write)}", justify="right"),
        Text(money(line.cost_usd, known=line.cost_known), justify="right"),
    )
