"""A tier whose tool is missing fails, in a developer's run as under CI, unless told."""

from __future__ import annotations

import pytest

from tests.conftest import ALLOW_SKIP, require_tool


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(ALLOW_SKIP, raising=False)


def test_a_present_tool_passes() -> None:
    require_tool(True, "tmux")


def test_a_missing_tool_fails_a_developers_run() -> None:
    with pytest.raises(pytest.fail.Exception, match=f"tmux is not available.*{ALLOW_SKIP}=1"):
        require_tool(False, "tmux")


def test_the_explicit_opt_out_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_SKIP, "1")
    with pytest.raises(pytest.skip.Exception, match="tmux is not available"):
        require_tool(False, "tmux")


def test_ci_fails_even_with_the_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(ALLOW_SKIP, "1")
    with pytest.raises(pytest.fail.Exception, match="required under CI=true"):
        require_tool(False, "tmux")
