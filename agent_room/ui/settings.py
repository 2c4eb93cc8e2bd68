"""``ConsoleSettings``: every knob of the console in one validated object, passed in.

Read from ``$XDG_CONFIG_HOME/agent-room/console.toml`` (if present) and the environment
(``AGENT_ROOM_HOME``, ``AGENT_ROOM_THEME``); tests build it directly and switch the
live parts off. No module keeps a global copy.

A frozen dataclass rather than a pydantic model, so that opening the console with no
config file (the usual case) loads no validation library before its first paint; a
config file is validated by pydantic (``ConsoleSettings.validate``), which honours the
``annotated_types`` bounds below and ``__pydantic_config__``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from annotated_types import Ge, Gt, Le

from agent_room.core.errors import BadInput, first_problem

DEFAULT_THEME = "agent-room-dark"


def config_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/agent-room`` (default ``~/.config/agent-room``)."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "agent-room"


@dataclass(frozen=True, kw_only=True)
class ConsoleSettings:
    """How the console runs."""

    __pydantic_config__: ClassVar[dict[str, object]] = {"extra": "forbid", "strict": False}

    home: str
    """The room directory (``$AGENT_ROOM_HOME``)."""
    theme: str = DEFAULT_THEME
    """The theme to open with; any registered theme name."""
    live: bool = True
    """Read the room in a background thread; off, the console shows the snapshot given."""
    watch: bool = True
    """Wake the reader on changes to the room directory (watchfiles); off in tests."""
    deliver: bool = True
    """Run the delivery worker inside the console (it takes the room's lease)."""
    liveness: bool = True
    """Check now and then that registered agent processes still run."""
    debounce: Annotated[int, Ge(1), Le(2000)] = 40
    """watchfiles debounce, ms: events within this window collapse into one wake-up."""
    step: Annotated[int, Ge(1), Le(1000)] = 20
    """watchfiles step, ms: how often the watcher looks for the end of a burst."""
    safety_interval: Annotated[float, Gt(0), Le(3600)] = 2.0
    """Seconds between re-reads when no event arrives (events can be lost)."""
    flow_limit: Annotated[int, Ge(1), Le(1000)] = 60
    """Lines of the message flow kept on screen."""
    theme_dirs: tuple[str, ...] = ()
    """Folders of the user's own theme files (``*.toml`` / ``*.json``)."""
    utc: bool = False
    """Show times in UTC instead of local time (the snapshot tests use it)."""
    restart_delay: Annotated[float, Ge(0)] = 5.0
    """Seconds before a background worker that failed is started again (0: never)."""

    @classmethod
    def validate(cls, values: Mapping[str, object]) -> ConsoleSettings:
        """Settings from untrusted ``values``; pydantic's ``ValidationError`` if invalid."""
        from pydantic import TypeAdapter

        return TypeAdapter(cls).validate_python(dict(values))

    @classmethod
    def load(cls, environ: Mapping[str, str]) -> ConsoleSettings:
        """Settings from the config file and the environment; ``BadInput`` when invalid."""
        from agent_room.store.home import room_home

        folder = config_dir(environ)
        home = str(room_home(environ))
        theme = environ.get("AGENT_ROOM_THEME") or None
        theme_dirs = (str(folder / "themes"), str(Path(home) / "themes"))
        path = folder / "console.toml"
        if not path.is_file():  # nothing the user wrote: nothing to validate
            return cls(home=home, theme=theme or DEFAULT_THEME, theme_dirs=theme_dirs)
        try:
            values: dict[str, object] = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise BadInput(f"{path}: {exc}") from None
        values.setdefault("theme_dirs", theme_dirs)
        values["home"] = home
        if theme:
            values["theme"] = theme
        from pydantic import ValidationError

        try:
            return cls.validate(values)
        except ValidationError as exc:
            raise BadInput(f"{path}: {first_problem(exc)}") from None


def default_environ() -> Mapping[str, str]:
    """The process environment (a seam for tests)."""
    return os.environ
