"""Bodies: what the bus accepts as text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.turn.core.bodies import DEFAULT_BODY_LIMIT, check_body
from agent_room.turn.core.errors import BadInput


@given(st.text(min_size=1).filter(lambda t: t.strip() and "\x00" not in t))
def test_text_without_nul_is_kept_verbatim(body: str) -> None:
    try:
        body.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(BadInput, match="UTF-8"):
            check_body(body)
        return
    assert check_body(body) == body


@given(st.text(), st.text())
def test_nul_is_refused_anywhere(before: str, after: str) -> None:
    with pytest.raises(BadInput, match="NUL"):
        check_body(before + "\x00" + after)


@pytest.mark.parametrize("body", ["", "   ", "\n\t\n"])
def test_empty_is_refused(body: str) -> None:
    with pytest.raises(BadInput, match="empty"):
        check_body(body)


def test_limit_counts_utf8_bytes() -> None:
    fits = "é" * (DEFAULT_BODY_LIMIT // 2)
    assert check_body(fits) == fits
    with pytest.raises(BadInput, match="limit"):
        check_body(fits + "x")
