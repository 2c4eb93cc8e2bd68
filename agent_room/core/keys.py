"""What may be typed into an agent's pane: one short, inert line.

Pure. Everything typed goes through ``safe_line`` first: control characters and escape
sequences (which tmux or the terminal would act on), bracketed-paste markers (which end
a paste early and run what follows) and newlines (which submit or execute) are removed,
and the length is capped well below tmux's limits.
"""

from __future__ import annotations

import re

MAX_TYPED = 512
"""Characters typed at most; a nudge is far shorter."""

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI sequences, including the paste markers ESC[200~/201~
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC sequences
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b."  # any other two-character escape
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_PASTE_MARKERS = re.compile(r"\[20[01]~")


def safe_line(text: str, limit: int = MAX_TYPED) -> str:
    """Return ``text`` as one line with nothing a terminal would act on, at most ``limit``."""
    without_escapes = _ESCAPES.sub("", text)
    flat = _CONTROLS.sub(" ", without_escapes)
    flat = _PASTE_MARKERS.sub("", flat)
    flat = re.sub(r" {2,}", " ", flat).strip()
    # tmux drops a trailing ';' of a send-keys argument: never end on one
    return flat[:limit].rstrip(" ;")


def safe_paste(text: str, limit: int = 16 * 1024 - 1) -> str:
    """Multi-line text for a bracketed paste: lines kept, everything else stripped."""
    lines = [safe_line(line, limit) for line in text.splitlines()]
    return "\n".join(lines)[:limit]
