"""``RoomSettings``: what the user sets for a room, in one validated model.

Two places feed it: the ``AGENT_ROOM_*`` variables and the room's own ``room.conf``
(``store.roomconf``, one ``key = value`` a line). A variable beats the file, the file
beats the default. A command that needs settings reads them once (``RoomSettings.load``)
and passes the model down; a bad value ends the command with one line that names the
variable or the file and line, never a traceback.

Not here: the variables agent-room sets itself for the agents it starts (the agent's
name, parent and client, the room's tool address and token: they say who a process is,
not how the room runs), and the hot path (hooks, ``send``, ``status``), which must start
without pydantic and keeps its own reads of ``AGENT_ROOM_HOME``, ``AGENT_ROOM_DATABASE``
and ``AGENT_ROOM_HOST`` (``store.home``, ``store.engine``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Gt, Le
from pydantic import ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.printable import printable
from agent_room.turn.store.engine import NOT_POSTGRESQL, SCHEMES
from agent_room.turn.store.home import room_home
from agent_room.turn.store.roomconf import CONFIG_NAME, read_room_conf

PREFIX = "AGENT_ROOM_"
"""Every setting's variable is ``AGENT_ROOM_`` and its name in capitals."""
SECRET = frozenset({"database"})
"""Settings whose value is never shown in an error (a URL may hold a password)."""


@dataclass(frozen=True)
class _Reading:
    """What one ``load`` reads from: the environment it was given, the file's settings."""

    environ: Mapping[str, str]
    conf: dict[str, tuple[str, int]]


_READING: ContextVar[_Reading | None] = ContextVar("agent_room_settings_reading", default=None)
"""The reading under way, for the sources pydantic-settings builds (they take no
arguments of ours); ``None``: the process's own environment and room."""


class RoomSettings(BaseSettings):
    """How the room runs. Each setting is ``AGENT_ROOM_<NAME>`` in the environment or
    ``<name> = value`` in the room's ``room.conf``; the variable wins."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_ignore_empty=True, extra="forbid", frozen=True
    )

    home: str
    """The room directory (``AGENT_ROOM_HOME`` only, default ``~/.agent-room``: the file
    lives in it). Must be absolute."""
    database: str | None = None
    """The PostgreSQL room (``postgresql://...``); none: the SQLite file in the room."""
    host: str | None = None
    """This machine's id in a room on PostgreSQL (variable only); none: its host name."""
    claude: str | None = None
    """The Claude Code program ``start``, ``enter`` and ``ask`` run; none: ``claude``."""
    codex: str | None = None
    """The Codex program; none: ``codex`` on the PATH."""
    gemini: str | None = None
    """The Gemini CLI program; none: ``gemini`` on the PATH."""
    tmux: str | None = None
    """The tmux socket ``start`` opens agents on; none: the default server."""
    mcp: bool = True
    """Serve the room's tools to agents over MCP from the watch (off: agents use the
    commands)."""
    watch: bool = True
    """Start a background deliverer on ``start`` and ``join`` when none runs (off:
    scripts, tests, a watch run elsewhere)."""
    watch_idle_exit: Annotated[float, Gt(0), Le(7 * 86400)] = 600.0
    """Seconds without a live agent after which the background watch ends."""

    @field_validator("database")
    @classmethod
    def _postgresql(cls, value: str | None) -> str | None:
        if value and not value.startswith(SCHEMES):
            raise ValueError(NOT_POSTGRESQL)
        return value

    def programs(self) -> dict[str, str]:
        """The programs set for the clients (claude, codex, gemini), by client."""
        given = {"claude": self.claude, "codex": self.codex, "gemini": self.gemini}
        return {kind: program for kind, program in given.items() if program}

    def program(self, kind: str) -> str | None:
        """The program set for the client ``kind``, if any."""
        return self.programs().get(kind)

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> RoomSettings:
        """The settings of the room ``environ`` names; ``BadInput`` (one line) when a
        value is invalid, ``UnsafeRoom`` when the file cannot be trusted."""
        env = os.environ if environ is None else environ
        home = room_home(env)
        reading = _Reading(env, read_room_conf(home))
        token = _READING.set(reading)
        try:
            return cls(home=home)
        except ValidationError as exc:
            raise BadInput(_where(exc, reading, home)) from None
        finally:
            _READING.reset(token)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,  # noqa: ARG003 - ours reads the mapping given
        dotenv_settings: PydanticBaseSettingsSource,  # noqa: ARG003 - no .env file
        file_secret_settings: PydanticBaseSettingsSource,  # noqa: ARG003 - no secrets folder
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then the variables, then ``room.conf``; no ``.env``, no secrets."""
        reading = _READING.get()
        if reading is None:
            reading = _Reading(os.environ, read_room_conf(room_home(os.environ)))
        return (
            init_settings,
            _EnvironSource(settings_cls, reading.environ),
            _RoomConfSource(settings_cls, reading.conf),
        )


class _EnvironSource(EnvSettingsSource):
    """The ``AGENT_ROOM_*`` variables of the environment given (not always the process's:
    a command may read settings for the room it is about to start an agent in)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._given = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {
            key.lower(): value
            for key, value in self._given.items()
            if key.startswith(PREFIX) and value.strip()
        }


class _RoomConfSource(PydanticBaseSettingsSource):
    """The settings of ``room.conf``, as ``store.roomconf`` read them (``home`` is the
    variable's alone: the file lives there)."""

    def __init__(self, settings_cls: type[BaseSettings], conf: dict[str, tuple[str, int]]) -> None:
        super().__init__(settings_cls)
        self._conf = conf

    def get_field_value(
        self,
        field: FieldInfo,  # noqa: ARG002 - the source's signature; the name says it all
        field_name: str,
    ) -> tuple[Any, str, bool]:
        value = self._conf.get(field_name)
        return (value[0] if value else None), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {key: value for key, (value, _line) in self._conf.items() if key != "home"}


def _where(exc: ValidationError, reading: _Reading, home: str) -> str:
    """The first problem as one line naming where the value came from."""
    first = exc.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else ""
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "bool_parsing":
        message = "give on or off"
    message = message[:1].lower() + message[1:]
    variable = f"{PREFIX}{key.upper()}"
    shown = "" if key in SECRET else f"={printable(str(first.get('input', '')))[:80]}"
    if reading.environ.get(variable, "").strip():
        return f"{variable}{shown}: {message}"
    if key in reading.conf:
        line = reading.conf[key][1]
        return f"{Path(home, CONFIG_NAME)} line {line}: {key}{shown}: {message}"
    return f"{key or 'settings'}: {message}"
