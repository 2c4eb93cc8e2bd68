"""A statement's parameters, numbered as the statement is written.

Every statement of the store is written once, in the SQL both engines run: parameters are
``$1``, ``$2``... (PostgreSQL's own; SQLite binds them by name). A statement with a fixed
shape writes its numbers out; one built from parts (a ``WHERE`` that depends on a filter,
an ``IN`` list) writes each parameter where it goes with ``Params``, so the numbers follow
the text whatever parts it has::

    p = Params()
    where = f"recipient = {p(name)}" if name else "TRUE"
    conn.execute(f"SELECT id FROM messages WHERE {where} LIMIT {p(limit)}", p)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: ``typing`` loads ``re`` (see store.db)
    from collections.abc import Iterable


class Params(list[object]):
    """The parameters of one statement: calling it keeps a value and writes its place."""

    __slots__ = ()

    def __call__(self, value: object) -> str:
        """``value`` as the statement's next parameter: its placeholder (``$n``)."""
        self.append(value)
        return f"${len(self)}"

    def each(self, values: Iterable[object]) -> str:
        """A placeholder for each of ``values``, comma-separated (an ``IN (...)`` list)."""
        return ", ".join([self(value) for value in values])


def placeholders(count: int) -> str:
    """``$1, $2, ... $count``: the parameters of a statement run for many rows."""
    return ", ".join([f"${number}" for number in range(1, count + 1)])
