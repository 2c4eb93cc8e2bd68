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

from agent_room.config.notify import NotifySettings
from agent_room.core.validation import first_problem
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.files import SETTINGS_LIMIT, read_regular
from agent_room.turn.store.home import room_home

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
    """Wake the reader on changes to the room directory (its file events); off in tests."""
    deliver: bool = True
    """Run the room's workers (the deliverer, the injector, memory, the notifier)."""
    background: bool = True
    """Deliver through the room's background deliverer (``start``'s), started when none
    listens unless the room's ``watch`` setting is off: the console's own workers stand
    by beside it, and take over if it ends (delivery goes on when the console quits).
    Off: the console's workers take the leases themselves."""
    liveness: bool = True
    """Check now and then that registered agent processes still run."""
    code: bool = True
    """Read each agent's branch and changes with git when its turn ends (the branch
    column, the changes view ``d``, handovers' code and overlaps); needs ``live``."""
    debounce: Annotated[int, Ge(1), Le(2000)] = 40
    """File events within this window, ms, collapse into one wake-up."""
    step: Annotated[int, Ge(1), Le(1000)] = 20
    """The pause, ms, that ends a burst of file events (where there is no inotify,
    watchfiles looks this often, at rest too; 40 cost a hook's change about 50 ms more
    on screen)."""
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
    notify: NotifySettings = NotifySettings()
    """Notifications (the ``[notify]`` table)."""
    until_clear: bool = False
    """Quit once a decision leaves no handover pending (``agent-room popup --until-clear``)."""
    served: bool = False
    """Running in a web browser (``agent-room serve``): no tmux pane to enter from here."""
    theme_memory: str | None = None
    """The file that remembers the theme last chosen in the console, read at the next
    start when neither ``--theme``, ``AGENT_ROOM_THEME`` nor the file sets one; ``None``
    (the tests): not remembered."""

    @classmethod
    def validate(cls, values: Mapping[str, object]) -> ConsoleSettings:
        """Settings from untrusted ``values``; pydantic's ``ValidationError`` if invalid."""
        from pydantic import TypeAdapter  # 12 ms: for a settings file only, not each start

        return TypeAdapter(cls).validate_python(dict(values))

    @classmethod
    def load(cls, environ: Mapping[str, str]) -> ConsoleSettings:
        """Settings from the config file and the environment; ``BadInput`` when invalid."""
        folder = config_dir(environ)
        home = str(room_home(environ))
        memory = theme_memory(environ)
        theme = environ.get("AGENT_ROOM_THEME") or None
        theme_dirs = (str(folder / "themes"), str(Path(home) / "themes"))
        path = folder / "console.toml"
        if not path.is_file():  # nothing the user wrote: nothing to validate
            chosen = theme or remembered_theme(memory) or DEFAULT_THEME
            return cls(home=home, theme=chosen, theme_dirs=theme_dirs, theme_memory=memory)
        try:
            values: dict[str, object] = tomllib.loads(
                read_regular(path, SETTINGS_LIMIT).decode("utf-8")
            )
        except OSError as exc:
            raise BadInput(f"{path}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise BadInput(f"{path}: {exc}") from None
        values.setdefault("theme_dirs", theme_dirs)
        values["home"] = home
        values["theme_memory"] = memory
        if theme or "theme" not in values:
            values["theme"] = theme or remembered_theme(memory) or DEFAULT_THEME
        from pydantic import ValidationError  # loaded by ``validate`` just before

        try:
            return cls.validate(values)
        except ValidationError as exc:
            raise BadInput(f"{path}: {first_problem(exc)}") from None


def theme_memory(environ: Mapping[str, str]) -> str:
    """Where the console remembers the theme chosen last (the XDG state folder)."""
    state = environ.get("XDG_STATE_HOME") or str(Path(environ.get("HOME", "~"), ".local", "state"))
    return str(Path(state).expanduser() / "agent-room" / "theme")


def remembered_theme(path: str | None) -> str | None:
    """The theme name remembered in ``path``, if any (a bad file counts as none)."""
    if path is None:
        return None
    try:
        name = read_regular(path, SETTINGS_LIMIT).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if name and len(name) <= 64 and name.isprintable() else None


def remember_theme(path: str | None, name: str) -> None:
    """Remember ``name`` for the next start (silently not, if the file cannot be written)."""
    if path is None:
        return
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        Path(path).write_text(name + "\n", encoding="utf-8")
    except OSError:
        pass


def default_environ() -> Mapping[str, str]:
    """The process environment (a seam for tests)."""
    return os.environ
