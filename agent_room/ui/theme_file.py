"""``ThemeFile``: the schema of a theme file, checked by pydantic.

Loaded only to read a theme the user wrote (``ui.themes`` reads the shipped ones, which
the test suite checks against this schema, without it).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from textual.color import Color, ColorParseError


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
