"""``Record``: an immutable-by-convention slots class that costs nothing to define.

The hook path runs on every turn of every agent, and ``dataclasses`` (via ``inspect``)
or ``typing.NamedTuple`` cost milliseconds to import and define there. A record lists
its fields in ``__slots__``, declares their types as annotations and its defaults in
``DEFAULTS``; construction is by keyword.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class Record:
    """Keyword-constructed value with slots, equality and a readable repr."""

    __slots__: tuple[str, ...] = ()
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self, **fields: Any) -> None:
        unknown = set(fields) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        for name in self.__slots__:
            if name in fields:
                value = fields[name]
            elif name in self.DEFAULTS:
                value = self.DEFAULTS[name]
            else:
                raise TypeError(f"{type(self).__name__} needs {name!r}")
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.__slots__))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({inner})"
