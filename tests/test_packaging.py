"""The explicit package list in pyproject.toml covers every package of the source tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.conftest import REPO, copy_source


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


def test_the_license_is_an_spdx_string_with_its_file() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert config["project"]["license"] == "MIT"
    assert config["project"]["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")


def test_building_prints_no_deprecation_warnings(tmp_path: Path) -> None:
    src = copy_source(tmp_path / "src")
    build = f"from setuptools import build_meta as b; b.build_wheel({str(tmp_path / 'dist')!r})"
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", build],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "Deprecat" not in output, output
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "agent_room-0.1.0.dist-info/licenses/LICENSE" in archive.namelist()


def test_the_setup_installs_in_compat_mode_without_a_warning(tmp_path: Path) -> None:
    """``.ci/setup`` (run by ``.ci/demo``) installs the checkout editable in compat mode:
    setuptools' 15-line notice about that mode must not reach whoever runs the demo."""
    setup = (REPO / ".ci" / "setup").read_text()
    match = re.search(r'PYTHONWARNINGS="([^"]+)"', setup)
    assert match, ".ci/setup sets no PYTHONWARNINGS for its install"
    assert "editable_mode=compat" in setup
    src = copy_source(tmp_path / "src")
    build = (
        "from setuptools import build_meta as b;"
        f" b.build_editable({str(tmp_path / 'dist')!r}, {{'editable_mode': 'compat'}})"
    )
    result = subprocess.run(
        [sys.executable, "-c", build],
        cwd=src,
        env={**os.environ, "PYTHONWARNINGS": match.group(1)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Compat editable installs" not in result.stdout + result.stderr, result.stderr
