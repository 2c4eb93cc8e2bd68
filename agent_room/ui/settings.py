"""``ConsoleSettings``: every knob of the console in one validated object, passed in.

Read from ``$XDG_CONFIG_HOME/agent-room/console.toml`` (if present) and the environment
(``AGENT_ROOM_HOME``, ``AGENT_ROOM_THEME``); tests build it directly and switch the
live parts off. No module keeps a global copy.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_room.core.errors import BadInput

DEFAULT_THEME = "agent-room-dark"


def config_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/agent-room`` (default ``~/.config/agent-room``)."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "agent-room"


class ConsoleSettings(BaseModel):
    """How the console runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
    debounce: int = Field(default=40, ge=1, le=2000)
    """watchfiles debounce, ms: events within this window collapse into one wake-up."""
    step: int = Field(default=20, ge=1, le=1000)
    """watchfiles step, ms: how often the watcher looks for the end of a burst."""
    safety_interval: float = Field(default=2.0, gt=0, le=3600)
    """Seconds between re-reads when no event arrives (events can be lost)."""
    flow_limit: int = Field(default=60, ge=1, le=1000)
    """Lines of the message flow kept on screen."""
    theme_dirs: tuple[str, ...] = ()
    """Folders of the user's own theme files (``*.toml`` / ``*.json``)."""
    utc: bool = False
    """Show times in UTC instead of local time (the snapshot tests use it)."""
    restart_delay: float = Field(default=5.0, ge=0)
    """Seconds before a background worker that failed is started again (0: never)."""

    @classmethod
    def load(cls, environ: Mapping[str, str]) -> ConsoleSettings:
        """Settings from the config file and the environment; ``BadInput`` when invalid."""
        from agent_room.store.home import room_home

        folder = config_dir(environ)
        values: dict[str, object] = {}
        path = folder / "console.toml"
        if path.is_file():
            try:
                values.update(tomllib.loads(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise BadInput(f"{path}: {exc}") from None
        home = str(room_home(environ))
        values["home"] = home
        if environ.get("AGENT_ROOM_THEME"):
            values["theme"] = environ["AGENT_ROOM_THEME"]
        values.setdefault("theme_dirs", (str(folder / "themes"), str(Path(home) / "themes")))
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise BadInput(f"{path}: {where}: {first['msg']}") from None


def default_environ() -> Mapping[str, str]:
    """The process environment (a seam for tests)."""
    return os.environ
