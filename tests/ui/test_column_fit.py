"""Fitting the sessions' columns to a window, as a plain function."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_room.ui.columns import COLUMNS, DROP_ORDER, fit_widths

LEAST = {c.key: c.least for c in COLUMNS}
MOST = {c.key: c.most for c in COLUMNS}
PADDING = 2


def _used(widths: dict[str, int]) -> int:
    return sum(widths.values()) + PADDING * len(widths)


def test_spare_room_goes_to_the_last_column() -> None:
    natural = dict(LEAST)
    widths = fit_widths(natural, _used(natural) + 50, PADDING)
    assert widths[COLUMNS[-1].key] == LEAST[COLUMNS[-1].key] + 50


def test_a_narrow_window_cuts_the_widest_first_then_leaves_columns_out() -> None:
    natural = {**LEAST, "cwd": 40, "delivery": 30}
    widths = fit_widths(natural, _used(natural) - 20, PADDING)
    assert (widths["cwd"], widths["delivery"]) == (25, 25)  # the widest gave until even
    tiny = fit_widths(natural, 40, PADDING)
    assert set(DROP_ORDER) <= set(natural) - set(tiny)
    assert _used(tiny) <= 40 or all(tiny[k] == LEAST[k] for k in tiny)


@given(
    st.fixed_dictionaries(
        {c.key: st.integers(min_value=c.least, max_value=c.most) for c in COLUMNS}
    ),
    st.integers(min_value=1, max_value=500),
)
def test_the_columns_fill_the_window_exactly_whenever_they_can(
    natural: dict[str, int], available: int
) -> None:
    widths = fit_widths(natural, available, PADDING)
    assert all(widths[k] >= LEAST[k] for k in widths)
    assert next(c.key for c in COLUMNS if c.key in widths) == "name"  # it always stays
    if sum(LEAST[k] + PADDING for k in widths) <= available:
        assert _used(widths) == available  # no empty space, no sideways scrolling


def test_names_and_agents_stay_whole_before_pane_and_age() -> None:
    """The demo room at 120x35 (a panel of 88 cells): long paths and notes give way, then
    the pane and the age; the name, the agent and the state stay whole."""
    natural = {
        **{k: v for k, v in LEAST.items() if k not in ("branch", "cost")},  # none in the demo
        "name": len("⚑ @frontend"),
        "agent": len("simulated"),
        "state": len("● waiting"),
        "cwd": len("/tmp/agent-room-demo-z8bczvfv/work/frontend"),
        "delivery": len("a permission dialog is open: messages wait"),
    }
    for available in (88, 78):
        widths = fit_widths(natural, available, PADDING)
        assert _used(widths) == available
        for key in ("name", "agent", "state"):
            assert widths[key] == natural[key], (available, widths)
        assert widths["cwd"] >= len("…/frontend")
    assert {"pane", "age"} <= set(fit_widths(natural, 88, PADDING))  # room enough: kept
