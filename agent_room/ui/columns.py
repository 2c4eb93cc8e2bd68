"""The sessions table's columns as data, and its filter and sort, without any widget.

A column is a key, a label, a cell renderer and a sort key; adding one (links, cost ...)
is one more entry in ``COLUMNS``. Kept free of widgets so the filter and sort are tested
as plain functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from agent_room.core.snapshot import SessionRow
from agent_room.core.usage import money
from agent_room.turn.core.printable import printable

STATE_ORDER = {"waiting": 0, "busy": 1, "idle": 2, "ended": 3}
"""Sorting by state puts the sessions that need a human first."""


@dataclass(frozen=True, slots=True)
class CellContext:
    """What a cell needs besides its row: the time and the theme's colours."""

    now: float
    colours: Mapping[str, str]
    """Theme variables, e.g. ``state-busy``."""
    widths: Mapping[str, int] = field(default_factory=dict)
    """The columns' widths as fitted to the window (cells that cut text to fit use it)."""


def age(seconds: float) -> str:
    """A short age: ``<1m``, ``7m``, ``3h``, ``2d``. Not to the second: a room of agents
    started together would have every row of the sessions table tick each second for
    their first minute (motion at the edge of the eye, and a redraw of every row each
    second), for a precision nobody reads off a session's age."""
    seconds = max(0.0, seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "<1m"


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
    if row.host:  # a room across machines: where the session runs
        text.append(f" on {printable(row.host)}", style="dim")
    return text


def _unread(row: SessionRow, _ctx: CellContext) -> Text:
    return Text(str(row.unread) if row.unread else "·", justify="right")


def _delivery(row: SessionRow, ctx: CellContext) -> Text:
    text = printable(row.delivery)
    if row.failed:
        return Text(text, style=ctx.colours.get("error", "red"), overflow="ellipsis")
    if row.clash and not row.note:
        return Text(text, style=ctx.colours.get("warning", "yellow"), overflow="ellipsis")
    return Text(text, style="dim", overflow="ellipsis")


def _cwd(row: SessionRow, ctx: CellContext) -> Text:
    return Text(short_path(printable(row.cwd or ""), ctx.widths.get("cwd", 28)))


def _branch(row: SessionRow, ctx: CellContext) -> Text:
    if not row.branch:
        return Text("·", style="dim")
    style = ctx.colours.get("warning", "yellow") if "●" in row.branch else ""
    return Text(printable(row.branch), style=style, overflow="ellipsis", no_wrap=True)


def _links(row: SessionRow, ctx: CellContext) -> Text:
    if not row.links:
        return Text("·", style="dim")
    style = ctx.colours.get("warning", "yellow") if row.unanchored or "frozen" in row.links else ""
    return Text(printable(row.links), style=style, overflow="ellipsis", no_wrap=True)


def _cost(row: SessionRow, ctx: CellContext) -> Text:
    if row.over_budget:  # its prompts wait for the operator
        shown = money(row.cost or 0.0, known=row.cost_known)
        return Text(f"{shown} over", style=ctx.colours.get("error", "red"), justify="right")
    if row.cost is None:
        return Text("·", style="dim", justify="right")
    return Text(money(row.cost, known=row.cost_known), justify="right")


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
    least: int
    """The narrowest it gets when the window is narrow (its text is cut with …)."""
    most: int
    """The widest its content makes it (the last column also takes what is left)."""


COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", _name, lambda r: r.name, 8, 32),
    Column(
        "agent",
        "Agent",
        lambda r, _c: Text(printable(r.agent or "-"), overflow="ellipsis"),
        lambda r: (r.agent, r.name),
        5,
        12,
    ),
    Column("state", "State", _state, lambda r: (STATE_ORDER.get(r.state, 9), r.name), 9, 10),
    Column("branch", "Branch", _branch, lambda r: (not r.branch, r.branch, r.name), 6, 28),
    Column("links", "Links", _links, lambda r: (not r.links, r.links, r.name), 5, 30),
    Column("cwd", "Cwd", _cwd, lambda r: (r.cwd or "", r.name), 8, 60),
    Column(
        "pane",
        "Pane",
        lambda r, _c: Text(printable(r.pane or "")),
        lambda r: (r.pane or "", r.name),
        4,
        6,
    ),
    Column(
        "age",
        "Age",
        lambda r, c: Text(age(c.now - r.started_at)),
        lambda r: (-r.started_at, r.name),
        3,
        4,
    ),
    Column("cost", "Today", _cost, lambda r: (-(r.cost or 0.0), r.name), 5, 14),
    Column("unread", "Unread", _unread, lambda r: (-r.unread, r.name), 6, 6),
    Column("delivery", "Delivery", _delivery, lambda r: (-r.failed, r.note, r.name), 8, 60),
)
"""The columns in display order."""

SORT_KEYS = tuple(c.key for c in COLUMNS)

SHRINK_ORDER = (
    "cwd",
    "delivery",
    "branch",
    "cost",
    "links",
    "name",
    "agent",
    "state",
    "pane",
    "age",
)
"""The columns that give up width when the window is too narrow for all (in this
order when two have as much to give)."""
DROP_ORDER = ("cost", "pane", "age", "agent", "cwd", "branch")
"""Which columns are left out, in turn, when even their narrowest is too wide."""
KEEP_WHOLE = ("name", "agent", "state")
"""Cut last: who it is, what it is and how it is say more than a path or a note, so
these give width only once the others are at their narrowest and ``SPARE`` has gone."""
SPARE = ("pane", "age")
"""Left out before a name, an agent or a state is cut."""


def cell_lengths(row: SessionRow, ctx: CellContext) -> dict[str, int]:
    """How wide each of a row's cells is drawn whole (the time moves its age on)."""
    return {
        # the folder is drawn cut to the width it gets
        col.key: len(printable(row.cwd or "")) if col.key == "cwd" else col.cell(row, ctx).cell_len
        for col in COLUMNS
    }


def natural_widths(
    rows: Sequence[SessionRow],
    ctx: CellContext,
    lengths: Callable[[SessionRow], Mapping[str, int]] | None = None,
) -> dict[str, int]:
    """Each column as wide as its label and its widest cell, within its ``most``;
    ``lengths`` gives a row's ``cell_lengths`` (kept by the caller, say)."""
    spent = any(row.cost is not None or row.over_budget for row in rows)
    shown = [c for c in COLUMNS if spent or c.key != "cost"]  # no usage read: no column
    widths = {c.key: len(c.label) for c in shown}
    for row in rows:
        found = lengths(row) if lengths is not None else cell_lengths(row, ctx)
        for col in shown:
            widths[col.key] = max(widths[col.key], found[col.key])
    if not any(row.branch for row in rows):  # nobody in a worktree: no branch column
        del widths["branch"]
    return {c.key: max(min(widths[c.key], c.most), c.least) for c in shown if c.key in widths}


def fit_widths(natural: Mapping[str, int], available: int, padding: int) -> dict[str, int]:
    """Column widths that fill ``available`` cells exactly when they can: what is left
    goes to the last column, what is missing is taken from the columns with the most to
    give (``SHRINK_ORDER`` on a tie) down to each column's ``least``, and the columns of
    ``DROP_ORDER`` are left out (absent from the result) when even that is too wide:
    never a sideways scrollbar."""
    widths = dict(natural)
    if available <= 0:
        return widths
    least = {c.key: c.least for c in COLUMNS}
    for key in (
        k for k in DROP_ORDER if k in widths
    ):  # columns that cannot fit even at their narrowest go
        if sum(least[k] + padding for k in widths) <= available:
            break
        widths.pop(key, None)
    spare = available - sum(widths.values()) - padding * len(widths)
    soft = [key for key in SHRINK_ORDER if key in widths and key not in KEEP_WHOLE]
    spare = _shrink(widths, soft, least, spare)
    for key in SPARE:  # rather than cut a name
        if spare < 0 and key in widths:
            spare += widths.pop(key) + padding
    spare = _shrink(widths, [key for key in SHRINK_ORDER if key in widths], least, spare)
    soft = [key for key in soft if key in widths]
    while spare > 0 and any(widths[k] < natural[k] for k in soft):  # what a drop left over
        key = max(soft, key=lambda k: natural[k] - widths[k])
        widths[key] += 1
        spare -= 1
    if spare > 0:
        widths[COLUMNS[-1].key] += spare
    return widths


def _shrink(widths: dict[str, int], keys: list[str], least: Mapping[str, int], spare: int) -> int:
    """Take what is missing (``-spare``) from ``keys``, a cell at a time from the column
    with the most to give (the first on a tie), so a long cwd and a long delivery note
    are cut alike; what is still missing after (negative), or the spare room."""
    while spare < 0 and keys:
        key = max(keys, key=lambda k: widths[k] - least[k])
        if widths[key] <= least[key]:
            break
        widths[key] -= 1
        spare += 1
    return spare


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
