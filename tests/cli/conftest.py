"""What the command-line tests share."""

from __future__ import annotations

from tests.conftest import Result


def one_line_error(result: Result, code: int | None, *fragments: str) -> None:
    """``result`` failed with ``code`` (any but 0 if None) and one line saying
    ``fragments``, never a traceback."""
    if code is None:
        assert result.code != 0, result
    else:
        assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("agent-room: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
