"""Text from the room made safe to print on a terminal or draw in the console.

Pure and standard library only: the hooks' error log, the CLI and the console all show
text that agents, transcripts and panes wrote, and a terminal acts on some characters
instead of showing them (``ESC]2;...BEL`` retitles the window, ``ESC[2J`` clears it, a
CR overwrites the line, bidi controls reorder what the operator reads). Every such
character is shown as a visible escape instead: ``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``.

The choices, for whoever reads the output:

- Multi-line text (a message body, a transcript) keeps its newlines and tabs; one-line
  text (a table cell, a log record, a title) shows them as ``\\n`` and ``\\t``, so one
  record is always one line.
- A backslash already in the text is left alone, so code and paths read as written. The
  escaped form is therefore not reversible (a body that says ``\\x1b`` in plain letters
  looks the same as one with the character); the exact text is what ``--json`` prints.
- Escaping is idempotent: escaped text contains nothing left to escape, and text with
  nothing to escape is returned unchanged (the common case costs one regex search).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Arabic letter mark, LRM/RLM, the embeddings and overrides, the isolates."""
_OTHER = "\u2028\u2029\ud800-\udfff"
"""Line and paragraph separators; lone surrogates (undecodable bytes from argv or a file
name, which could not even be encoded for the terminal)."""
_MULTILINE = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_OTHER}]"
_ONE_LINE = f"[\x00-\x1f\x7f-\x9f{_BIDI}{_OTHER}]"
"""Compiled on first use (``re`` keeps them): most processes that import this module,
every hook among them, never print anything unusual."""
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character a terminal would act on shown as an escape.

    ``multiline`` keeps newlines and tabs (for bodies printed as several lines); without
    it the result is always a single line.
    """
    if text.isprintable():  # no control, format, separator or surrogate character at all
        return text
    import re

    pattern = re.compile(_MULTILINE if multiline else _ONE_LINE)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def printable_json(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as JSON that is exact and still safe on a terminal.

    ``json.dumps`` already escapes C0 controls; C1, bidi and the other characters above
    are written as ``\\uXXXX`` escapes too, which decode to the very same text. Outside
    strings JSON is plain ASCII (its newlines and spaces are the indentation), so
    replacing them anywhere in the output is sound.
    """
    import json
    import re

    raw = json.dumps(data, ensure_ascii=False, indent=indent)
    return re.compile(_MULTILINE).sub(lambda m: f"\\u{ord(m.group()):04x}", raw)
