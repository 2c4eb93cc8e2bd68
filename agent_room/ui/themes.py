"""Theme files: the shipped ``themes/`` folder and the user's own, as Textual ``Theme``s.

A theme file is TOML (or JSON) with Textual's colour fields plus ``[variables]``; the
console's own variables (the colour of each session state, the cycle badge) have
defaults so that Textual's built-in themes work too. A user's file is checked against
``ui.theme_file.ThemeFile``; a bad one is reported, never fatal: the loader returns the
themes it could read and one line per file it could not. The shipped files are read as
they are (the test suite holds them to the same schema), so that opening the console
loads no validation library before its first paint.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual.app import App
from textual.theme import Theme

from agent_room.core.validation import first_problem
from agent_room.turn.core.files import SETTINGS_LIMIT, read_regular

VARIABLE_DEFAULTS: dict[str, str] = {
    "state-idle": "#5fd787",
    "state-busy": "#ffaf00",
    "state-waiting": "#ff5f87",
    "state-ended": "#808080",
    "cycle-badge": "#ff5f5f",
    "traffic-edge": "#5fafff",
}
"""The console's own theme variables, with the values used when a theme leaves them out."""


def shipped_dir() -> Path:
    """The shipped themes: ``agent_room/_themes`` in a wheel, ``themes/`` in a checkout."""
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "_themes", package.parent / "themes"):
        if folder.is_dir():
            return folder
    return package / "_themes"


def parse_theme_text(path: Path) -> dict[str, Any]:
    """A theme file's contents, not yet checked; ``ValueError`` if it cannot be parsed."""
    try:
        text = read_regular(path, SETTINGS_LIMIT).decode("utf-8")
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError, JSON too
        raise ValueError(f"{path.name}: {exc}") from None
    return data  # type: ignore[no-any-return]  # JSON's other shapes fail the schema


def theme_from(fields: dict[str, Any]) -> Theme:
    """The Textual theme of a theme file's fields, with the console's variable defaults."""
    variables = {**VARIABLE_DEFAULTS, **fields.get("variables", {})}
    return Theme(**{k: v for k, v in fields.items() if k != "variables"}, variables=variables)


def read_theme(path: Path, *, trusted: bool = False) -> Theme:
    """One theme file; ``ValueError`` with a one-line reason if it is bad.

    ``trusted`` (the shipped files) skips the schema check.
    """
    data = parse_theme_text(path)
    if trusted:
        return theme_from(data)
    # pydantic and the schema (60 ms) load for a user's own theme only, not at each start
    from pydantic import ValidationError

    from agent_room.ui.theme_file import ThemeFile

    try:
        checked = ThemeFile.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path.name}: {first_problem(exc)}") from None
    return theme_from(checked.model_dump(exclude_none=True))


def load_themes(
    folders: tuple[Path, ...], *, trusted: bool = False
) -> tuple[list[Theme], list[str]]:
    """Every theme in ``folders`` (later folders override earlier names) and the errors."""
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.glob("*.toml"), *folder.glob("*.json")]):
            try:
                theme = read_theme(path, trusted=trusted)
            except ValueError as exc:
                errors.append(f"theme {folder / path.name}: {str(exc).split(': ', 1)[-1]}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), errors


def register_themes(app: App[Any], user_dirs: Sequence[str]) -> tuple[set[str], list[str]]:
    """Register the shipped themes and those in ``user_dirs`` with ``app``, and take
    Textual's own two dozen away (only ``textual-dark`` stays, the last resort);
    return the names of the user's themes and the problems met."""
    shipped, errors = load_themes((shipped_dir(),), trusted=True)
    users, user_errors = load_themes(tuple(Path(d) for d in user_dirs))
    for theme in (*shipped, *users):
        app.register_theme(theme)
    ours = {theme.name for theme in (*shipped, *users)}
    for name in list(app.available_themes):
        if name not in ours and name != "textual-dark":
            app.unregister_theme(name)
    return {theme.name for theme in users}, [*errors, *user_errors]
