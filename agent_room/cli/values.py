"""The checks of typed command-line values (ids, counts, times, ports, dollars).

Plain functions (``cli.params.Checked`` makes click types of them): each returns the
value or raises ``ValueError`` with the one line the user reads.
"""

from __future__ import annotations


def message_id(text: str) -> int:
    """A message's, link's, timer's or hold's id: ``41`` or ``#41``."""
    value = text.removeprefix("#")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"invalid id {text!r}: use a number such as 41")
    return int(value)


def count(text: str) -> int:
    """A positive whole number."""
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"invalid count {text!r}: use a positive number")
    return int(text)


def seconds(text: str) -> float:
    """A wait of 0 to 600 seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 600:
        raise ValueError(f"invalid time {text!r}: use seconds from 0 to 600")
    return value


def timeout(text: str) -> float:
    """A client's time limit: more than 0 seconds, at most a day."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86400:
        raise ValueError(f"invalid time {text!r}: use seconds, e.g. 600")
    return value


def port(text: str) -> int:
    """A TCP port."""
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"invalid port {text!r}: use 1 to 65535")
    return int(text)


def dollars(text: str) -> float:
    """An amount of dollars, ``5`` or ``$5``, from 0 to a billion."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise ValueError(f"not an amount of dollars: {text!r}") from None
    if not value >= 0 or value > 1e9:
        raise ValueError(f"not an amount of dollars: {text!r}")
    return value
