"""The explicit package list in pyproject.toml covers every package of the source tree."""

from __future__ import annotations

import tomllib

from tests.conftest import REPO


def test_every_package_is_listed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "agent_room").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, sorted(found - listed)
    assert "agent_room._plugin" in listed
    assert config["tool"]["setuptools"]["package-dir"]["agent_room._plugin"] == "plugin"
