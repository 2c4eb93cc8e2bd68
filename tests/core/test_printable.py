"""Text made safe for a terminal: nothing a terminal acts on survives, the rest is kept."""

from __future__ import annotations

import json
import re

from hypothesis import assume, example, given
from hypothesis import strategies as st

from agent_room.turn.core.printable import printable, printable_json

HOSTILE = (
    "title\x1b]2;pwned\x07 clear\x1b[2J back\roverwrite c1\x9b31m "
    "bidi\u202egnp.exe\u202c iso\u2066x\u2069 marks\u200e\u200f\u061c"
)
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Everything a terminal would act on, except the newline and tab of multi-line text."""

# text that leans towards what a terminal acts on, mixed with ordinary characters
_chars = st.one_of(
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0, max_codepoint=0x9F),
    st.sampled_from(list("\u061c\u200e\u200f\u202a\u202e\u2066\u2069\u2028\u2029\\")),
)
texts = st.text(_chars, max_size=80)


def test_each_kind_is_shown_escaped() -> None:
    shown = printable(HOSTILE)
    assert "\\x1b]2;pwned\\x07" in shown
    assert "\\x1b[2J" in shown
    assert "back\\roverwrite" in shown
    assert "\\x9b31m" in shown
    assert "\\u202egnp.exe\\u202c" in shown
    assert "\\u2066x\\u2069" in shown
    assert "\\u200e\\u200f\\u061c" in shown
    assert not ACTED_ON.search(shown)


def test_multiline_keeps_lines_and_tabs_one_line_does_not() -> None:
    body = "first\n\tsecond\r\nthird"
    assert printable(body, multiline=True) == "first\n\tsecond\\r\nthird"
    assert printable(body) == "first\\n\\tsecond\\r\\nthird"


def test_ordinary_text_is_untouched() -> None:
    text = "naïve café — 日本語 ✓ C:\\path\\x1b literal [bold]x[/]"
    assert printable(text) is text
    assert printable(text, multiline=True) is text


@given(texts)
@example(HOSTILE)
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    one_line = printable(text)
    assert not ACTED_ON.search(one_line)
    assert "\n" not in one_line
    assert "\t" not in one_line
    multi = printable(text, multiline=True)
    assert not ACTED_ON.search(multi)
    assert multi.count("\n") == text.count("\n")
    for shown in (one_line, multi):
        shown.encode("utf-8")  # no lone surrogate left: always printable in UTF-8
        assert not re.search("[\u2028\u2029\ud800-\udfff]", shown)


@given(texts)
def test_idempotent_and_a_no_op_on_safe_text(text: str) -> None:
    for multiline in (False, True):
        once = printable(text, multiline=multiline)
        assert printable(once, multiline=multiline) == once
        if not ACTED_ON.search(text) and not re.search("[\n\t\u2028\u2029\ud800-\udfff]", text):
            assert once == text


@given(texts)
def test_escapes_decode_back_when_the_text_had_no_backslash(text: str) -> None:
    """Reversible enough: without a backslash of its own, the text can be read back."""
    assume("\\" not in text)
    shown = printable(text, multiline=True)
    decoded = re.sub(
        r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|[rnt])",
        lambda m: m.group().encode().decode("unicode_escape"),
        shown,
    )
    assert decoded == text


@given(st.dictionaries(st.text(_chars, max_size=5), texts, max_size=4))
@example({"body": HOSTILE})
def test_json_is_exact_and_safe(data: dict[str, str]) -> None:
    out = printable_json(data)
    assert json.loads(out) == data
    assert not ACTED_ON.search(out.replace("\n", ""))
    assert not re.search("[\u2028\u2029\ud800-\udfff]", out)
