"""The parts of a ``postgresql://`` URL the room reads itself, without ``urllib.parse``
(its imports would cost the hooks): whether it carries a password, and a part with its
``%XX`` escapes undone. A module of its own, below both ``engine`` (which reads the URL)
and ``notices`` (which finds the password file it names), so neither imports the other
back. Standard library only.
"""

from __future__ import annotations


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (refused where it would be seen: a command line)."""
    location = url.split("://", 1)[-1].partition("?")[0]
    query = url.partition("?")[2]
    user = location.rpartition("@")[0] if "@" in location else ""
    return ":" in user or any(p.startswith("password=") for p in query.split("&"))


def unquote(text: str) -> str:
    """A URL part with its ``%XX`` escapes undone; a malformed one is kept as written
    (``urllib.parse`` would cost the hooks its imports)."""
    pieces = text.split("%")
    return pieces[0] + "".join(_unescaped(piece) for piece in pieces[1:])


def _unescaped(piece: str) -> str:
    """One ``%XX`` escape and the text after it; a malformed one is kept as written."""
    code = piece[:2]
    if len(code) == 2 and all(c in "0123456789abcdefABCDEF" for c in code):
        return chr(int(code, 16)) + piece[2:]
    return "%" + piece
