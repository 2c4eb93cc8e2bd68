"""Names: the rules that keep them safe in paths, panes and shell words."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.names import (
    MAX_NAME_LENGTH,
    name_from_cwd,
    parse_name,
    unique_name,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("backend", "backend"), ("@frontend", "frontend"), ("Mobile", "mobile"), ("a_1-b", "a_1-b")],
)
def test_valid_names_are_canonical(raw: str, expected: str) -> None:
    assert parse_name(raw) == expected


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "empty"),
        ("a/b", "path separators"),
        ("..", "path separators"),
        ("a..b", "path separators"),
        ("back\\end", "path separators"),
        ("bad\x1bname", "control characters"),
        ("nul\x00", "control characters"),
        ("two words", "spaces"),
        ("x" * 33, "longer than 32"),
        ("-dash", "use a-z"),
        ("caf\u00e9", "use a-z"),
        ("room", "reserved"),
        ("operator", "reserved"),
    ],
)
def test_invalid_names_are_refused_with_the_reason(raw: str, why: str) -> None:
    with pytest.raises(BadInput, match=why):
        parse_name(raw)


@given(st.text(max_size=64))
def test_any_accepted_name_is_safe(raw: str) -> None:
    try:
        name = parse_name(raw)
    except BadInput as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert "\n" not in message
        return
    assert re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", name)
    assert len(name) <= MAX_NAME_LENGTH
    assert "/" not in name
    assert ".." not in name


@given(st.text(max_size=200))
def test_cwd_always_yields_a_valid_name(cwd: str) -> None:
    name = name_from_cwd(cwd)
    assert parse_name(name) == name


@given(st.sets(st.sampled_from(["api", "api-2", "api-3", "x" * 32, "x" * 30 + "-2"])))
def test_unique_name_avoids_taken(taken: set[str]) -> None:
    for base in ("api", "x" * 32):
        name = unique_name(base, taken)
        assert name not in taken
        assert parse_name(name) == name


@given(
    st.one_of(
        st.from_regex(r"[a-zA-Z0-9_\- ./]{0,40}", fullmatch=True),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
    )
)
def test_name_checks_match_the_documented_pattern(raw: str) -> None:
    """The checks avoid ``re`` for speed; they must mean exactly the pattern."""
    from agent_room.turn.core.names import is_valid_name

    assert is_valid_name(raw) == bool(re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", raw))
    folded = raw.rstrip("/").rsplit("/", 1)[-1].lower()
    expected = re.sub(r"[^a-z0-9_-]+", "-", folded).strip("-_")[:MAX_NAME_LENGTH].strip("-_")
    if expected and expected not in {"room", "operator", "all", "everyone"}:
        assert name_from_cwd(raw) == expected
