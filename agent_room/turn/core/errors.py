"""Errors a user can cause, each with its exit code.

Every error the command line reports without a traceback derives from ``RoomError``;
anything else is a bug and is allowed to show one.
"""

from __future__ import annotations


class RoomError(Exception):
    """An error caused by input or by the state of the room, reported in one line."""

    exit_code: int = 1


class BadInput(RoomError):
    """The command's input is malformed: a bad name, an empty or oversized body."""

    exit_code = 2


class UnknownName(BadInput):
    """The name is valid but nobody of that name is in the room."""


class NotFound(RoomError):
    """A message, handover or session that does not exist."""


class Refused(RoomError):
    """The request is well-formed but the room's rules forbid it now."""


class UnsafeRoom(RoomError):
    """The room directory or one of its files is not private to the user."""


class RoomUnavailable(RoomError):
    """The room's database cannot be opened, is locked, or is from a newer version."""


class RoomGone(RoomUnavailable):
    """The room's directory was removed under a process that had it open (which never
    makes it anew: only a command that starts the room does)."""


UNREACHABLE_PREFIX = "the room's database "
"""How a PostgreSQL room out of reach (down, or refusing this role) begins its reason:
such a fault is said as it is, never as a busy room."""


class PaneUnavailable(RoomError):
    """The multiplexer could not reach a pane: it is gone, or its server is."""
