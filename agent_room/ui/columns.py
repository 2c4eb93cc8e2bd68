"""The sessions table's columns as data, and its filter and sort, without any widget.

A column is a key, a label, a cell renderer and a sort key; adding one (links, cost ...)
is one more entry in ``COLUMNS``. Kept free of widgets so the filter and sort are tested
as plain functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from agent_room.core.printable import printable
from agent_room.core.snapshot import SessionRow

STATE_ORDER = {"waiting": 0, "busy": 1, "idle": 2, "ended": 3}
"""Sorting by state puts the sessions that need a human first."""


@dataclass(frozen=True, slots=True)
class CellContext:
    """What a cell needs besides its row: the time and the theme's colours."""

    now: float
    colours: Mapping[str, str]
    """Theme variables, e.g. ``state-busy``."""


def age(seconds: float) -> str:
    """A short age: ``42s``, ``7m``, ``3h``, ``2d``."""
    seconds = max(0.0, seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def short_path(path: str | None, width: int = 28) -> str:
    """The end of a path, which says more than its start."""
    if not path:
        return ""
    return path if len(path) <= width else "…" + path[-(width - 1) :]


def _state(row: SessionRow, ctx: CellContext) -> Text:
    colour = ctx.colours.get(f"state-{row.state}", "")
    return Text(f"● {row.state}", style=colour)


def _name(row: SessionRow, ctx: CellContext) -> Text:
    text = Text("  " * row.depth, overflow="ellipsis", no_wrap=True)
    if row.needs_operator:  # waits for the operator: a handover, a dialog, a failure
        text.append("⚑ ", style=ctx.colours.get("warning", "yellow"))
    text.append(f"@{row.name}")
    return text


def _unread(row: SessionRow, _ctx: CellContext) -> Text:
    return Text(str(row.unread) if row.unread else "·", justify="right")


def _delivery(row: SessionRow, ctx: CellContext) -> Text:
    if row.failed:
        return Text(printable(row.delivery), style=ctx.colours.get("error", "red"))
    if row.clash and not row.note:
        return Text(printable(row.delivery), style=ctx.colours.get("warning", "yellow"))
    return Text(printable(row.delivery), style="dim")


def _links(row: SessionRow, ctx: CellContext) -> Text:
    if not row.links:
        return Text("·", style="dim")
    style = ctx.colours.get("warning", "yellow") if row.unanchored or "frozen" in row.links else ""
    return Text(printable(row.links), style=style, overflow="ellipsis", no_wrap=True)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the sessions table."""

    key: str
    label: str
    cell: Callable[[SessionRow, CellContext], Text]
    """The cell: always ``Text``, never a string, which the table would parse as markup
    (a ``[`` in a path would be taken for a style, and parsing costs on a big room); any
    text that an agent or a hook supplied goes through ``core.printable`` first."""
    sort: Callable[[SessionRow], Any]
    width: int | None = None
    """Fixed width in cells: measuring every cell of a big room is what costs."""


COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", _name, lambda r: r.name, 20),
    Column(
        "agent", "Agent", lambda r, _c: Text(printable(r.agent)), lambda r: (r.agent, r.name), 7
    ),
    Column("state", "State", _state, lambda r: (STATE_ORDER.get(r.state, 9), r.name), 10),
    Column("links", "Links", _links, lambda r: (not r.links, r.links, r.name), 20),
    Column(
        "cwd",
        "Cwd",
        lambda r, _c: Text(short_path(printable(r.cwd or ""))),
        lambda r: (r.cwd or "", r.name),
        28,
    ),
    Column(
        "pane",
        "Pane",
        lambda r, _c: Text(printable(r.pane or "")),
        lambda r: (r.pane or "", r.name),
        5,
    ),
    Column(
        "age",
        "Age",
        lambda r, c: Text(age(c.now - r.started_at)),
        lambda r: (-r.started_at, r.name),
        4,
    ),
    Column("unread", "Unread", _unread, lambda r: (-r.unread, r.name), 6),
    Column("delivery", "Delivery", _delivery, lambda r: (-r.failed, r.note, r.name), 24),
)
"""The columns in display order."""

SORT_KEYS = tuple(c.key for c in COLUMNS)


def column(key: str) -> Column:
    """The column with ``key``."""
    for candidate in COLUMNS:
        if candidate.key == key:
            return candidate
    raise KeyError(key)


def matches(row: SessionRow, query: str) -> bool:
    """Whether a session matches the filter: every word in name, agent, state, cwd or pane."""
    haystack = " ".join(
        (row.name, row.agent, row.state, row.cwd or "", row.pane or "", row.session_id or "")
    ).lower()
    return all(word in haystack for word in query.lower().split())


def visible(
    rows: Sequence[SessionRow], *, query: str = "", sort: str | None = None, reverse: bool = False
) -> list[SessionRow]:
    """The rows shown: filtered by ``query``, in the room's order or sorted by ``sort``."""
    shown = [r for r in rows if matches(r, query)] if query.strip() else list(rows)
    if sort is not None:
        shown.sort(key=column(sort).sort, reverse=reverse)
    return shown
