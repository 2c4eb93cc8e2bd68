"""What may be typed into a pane (``core.keys``): one short, inert line, case by case."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_room.core.keys import MAX_TYPED, safe_line, safe_paste


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x\x1b[201~; rm -rf ~", "x; rm -rf ~"),  # a paste end marker with ESC
        ("x[201~; rm -rf ~", "x; rm -rf ~"),  # ... and without it (ESC stripped on the way)
        ("[200~start", "start"),
        ("a\x03b", "a b"),  # ^C would end the program
        ("a\x04b\x1ac", "a b c"),  # ^D, ^Z
        ("one\ntwo\rthree", "one two three"),  # a newline or CR would submit
        ("a\u2028b\u2029c", "a b c"),  # line and paragraph separators
        ("a\x7fb", "a b"),  # DEL
        ("a\x85b\x9b", "a b"),  # C1 controls: NEL, a bare 8-bit CSI
        ("a\x9b31mred", "ared"),  # an 8-bit CSI sequence
        ("a\x1b]2;title\x07b", "ab"),  # OSC: retitles the terminal
        ("a\x1b]52;c;Zm9v\x1b\\b", "ab"),  # OSC 52: writes the clipboard
        ("a\x1bPq#0\x1b\\b", "ab"),  # DCS string
        ("a\x1b[2Jb", "ab"),  # CSI: clears the screen
        ("a\x1b7b", "ab"),  # a two-character escape
        ("echo done;", "echo done"),  # tmux drops a trailing ';' of send-keys
        ("echo done; ;", "echo done"),
        ("  spaced   out  ", "spaced out"),
    ],
)
def test_a_typed_line_is_inert(text: str, expected: str) -> None:
    assert safe_line(text) == expected


def test_the_length_is_capped() -> None:
    assert safe_line("x" * (MAX_TYPED * 4)) == "x" * MAX_TYPED
    assert safe_line("abcdef", limit=3) == "abc"
    assert len(safe_line("é" * 10_000)) == MAX_TYPED


def test_markers_rebuilt_by_stripping_are_gone_too() -> None:
    """Removing one thing must not leave a marker behind that was split around it."""
    assert "[201~" not in safe_line("[20\x1b[0m1~")
    assert "[201~" not in safe_line("[2\x0301~")


def test_a_paste_keeps_lines_and_strips_the_rest() -> None:
    text = "first\x1b[201~ line\nsecond [200~line\x03\n\x1b]2;t\x07third"
    assert safe_paste(text) == "first line\nsecond line\nthird"
    assert len(safe_paste("y" * 40_000)) < 16 * 1024


@given(st.text(max_size=300))
@example("x[201~y")
@example("\x1b[201~")
@example("[20\x1b[0m1~")
@example("a\x9b201~b")
def test_any_text_becomes_one_inert_line(text: str) -> None:
    line = safe_line(text)
    assert len(line) <= MAX_TYPED
    assert all(ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F for ch in line)
    assert not {"\u2028", "\u2029"} & set(line)
    assert "[201~" not in line
    assert "[200~" not in line
    assert not line.endswith(";")
