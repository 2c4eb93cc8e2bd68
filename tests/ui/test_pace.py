"""``Pace``: how fast the room changes, from the reader's passes over its change count."""

from __future__ import annotations

from agent_room.ui.reading import Pace


def test_changes_now_and_then_are_not_busy_a_stream_is() -> None:
    pace = Pace(busy_rate=8.0, window=1.0)
    for n in range(10):  # a hook every half second, two writes each
        pace.note(2 * n, 0.5 * n)
    assert not pace.busy()
    for n in range(10):  # then twenty changes a second
        pace.note(20 + n, 5.0 + 0.05 * n)
    assert pace.busy()


def test_a_stream_that_has_just_begun_is_counted_over_the_whole_window() -> None:
    """Its first changes show at once: a burst of five within a tenth of a second, after a
    quiet spell, is five changes a second, not fifty."""
    pace = Pace(busy_rate=8.0, window=1.0)
    pace.note(0, 0.0)
    for n in range(1, 6):
        pace.note(n, 10.0 + 0.02 * n)
    assert not pace.busy()
    pace.note(9, 10.2)
    assert pace.busy()  # eight changes within the window, and a little of the first


def test_the_rate_is_over_the_window_however_long_the_reader_paused() -> None:
    """A reader that paused two seconds finds the changes of those two seconds."""
    pace = Pace(busy_rate=8.0, window=1.0)
    pace.note(0, 0.0)
    pace.note(12, 2.0)  # six a second
    assert not pace.busy()
    pace.note(44, 4.0)  # sixteen a second
    assert pace.busy()


def test_without_a_count_each_pass_counts_one_change() -> None:
    """A reader that knows no count of the room's changes is woken only by changes."""
    pace = Pace(busy_rate=8.0, window=1.0)
    for n in range(4):
        pace.note(None, 0.25 * n)
    assert not pace.busy()
    for n in range(12):
        pace.note(None, 1.0 + 0.08 * n)
    assert pace.busy()
