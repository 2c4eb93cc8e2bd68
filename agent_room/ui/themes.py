"""Theme files: the shipped ``themes/`` folder and the user's own, as Textual ``Theme``s.

A theme file is TOML (or JSON) with Textual's colour fields plus ``[variables]``; the
console's own variables (the colour of each session state, the cycle badge) have
defaults so that Textual's built-in themes work too. A bad user file is reported, never
fatal: the loader returns the themes it could read and one line per file it could not.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from textual.color import Color, ColorParseError
from textual.theme import Theme

VARIABLE_DEFAULTS: dict[str, str] = {
    "state-idle": "#5fd787",
    "state-busy": "#ffaf00",
    "state-waiting": "#ff5f87",
    "state-ended": "#808080",
    "cycle-badge": "#ff5f5f",
    "traffic-edge": "#5fafff",
}
"""The console's own theme variables, with the values used when a theme leaves them out."""


def _colour(value: str) -> str:
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"not a colour: {value!r}") from None
    return value


ColourText = Annotated[str, AfterValidator(_colour)]


class ThemeFile(BaseModel):
    """One theme file, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")
    dark: bool = True
    primary: ColourText
    secondary: ColourText | None = None
    accent: ColourText | None = None
    warning: ColourText | None = None
    error: ColourText | None = None
    success: ColourText | None = None
    foreground: ColourText | None = None
    background: ColourText | None = None
    surface: ColourText | None = None
    panel: ColourText | None = None
    boost: ColourText | None = None
    variables: dict[str, str] = Field(default_factory=dict)

    def to_theme(self) -> Theme:
        """The Textual theme."""
        fields = self.model_dump(exclude={"variables"})
        return Theme(**fields, variables={**VARIABLE_DEFAULTS, **self.variables})


def shipped_dir() -> Path:
    """The shipped themes: ``agent_room/_themes`` in a wheel, ``themes/`` in a checkout."""
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "_themes", package.parent / "themes"):
        if folder.is_dir():
            return folder
    return package / "_themes"


def read_theme(path: Path) -> Theme:
    """Parse one theme file; ``ValueError`` with a one-line reason if it is bad."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ValueError(f"{path.name}: {where}: {first['msg']}") from None
    except (OSError, UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path.name}: {exc}") from None


def load_themes(folders: tuple[Path, ...]) -> tuple[list[Theme], list[str]]:
    """Every theme in ``folders`` (later folders override earlier names) and the errors."""
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.glob("*.toml"), *folder.glob("*.json")]):
            try:
                theme = read_theme(path)
            except ValueError as exc:
                errors.append(f"theme {folder / path.name}: {str(exc).split(': ', 1)[-1]}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), errors
