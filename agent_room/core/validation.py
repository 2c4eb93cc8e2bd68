"""pydantic's complaints about a file or a setting, said in one line (for the callers
that load pydantic only once a file needs validating, such as the console's settings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


def first_problem(exc: ValidationError) -> str:
    """The first of pydantic's complaints as ``field: message`` (``file`` when it is
    about the whole input), for a one-line error."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "file"
    return f"{where}: {first['msg']}"
