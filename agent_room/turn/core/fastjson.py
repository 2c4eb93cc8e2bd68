"""JSON for the hook path, straight from CPython's C accelerator (``_json``).

The ``json`` package imports ``re`` (and with it ``enum``'s friends) for the few regular
expressions of its pure-Python fallback: about 4 ms of every hook's start, a quarter of
what a hook costs beyond the bare interpreter. The C scanner and encoder that ``json``
itself uses when it can are driven here directly, with the same settings as
``json.loads`` and ``json.dumps`` (strict strings, no NaN out of the blue, the default
separators); where there is no ``_json`` (another Python) this falls back to ``json``.
Errors are ``ValueError`` as ``json``'s are: only an error loads ``json`` (the C scanner
raises its ``JSONDecodeError``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]


def _constant(name: str) -> float:
    return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


class _Context:
    """What ``_json.make_scanner`` reads from a decoder: ``json.loads``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


def _unserializable(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


if _json is not None:
    _scan: Callable[[str, int], tuple[Any, int]] = _json.make_scanner(_Context())  # type: ignore[arg-type]


def skip_space(text: str, at: int) -> int:
    """The first index from ``at`` that is not JSON whitespace."""
    end = len(text)
    while at < end and text[at] in _WHITESPACE:
        at += 1
    return at


def raw_decode(text: str, at: int = 0) -> tuple[Any, int]:
    """The JSON value starting at ``at`` (no whitespace before it) and where it ends."""
    if _json is None:  # pragma: no cover - not CPython
        import json

        return json.JSONDecoder().raw_decode(text, at)
    try:
        return _scan(text, at)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except SystemError:  # the scanner raises its errors from json.decoder, not loaded yet
        import json

        return json.JSONDecoder().raw_decode(text, at)  # raises it, with its message


def loads(data: str | bytes) -> Any:
    """``json.loads`` (UTF-8 for bytes, a byte order mark allowed as ``json`` does)."""
    if isinstance(data, bytes):  # (a byte order mark by hand: utf-8-sig is one more import)
        data = data.decode("utf-8").removeprefix("\ufeff")
    text = data
    value, end = raw_decode(text, skip_space(text, 0))
    extra = skip_space(text, end)
    if extra != len(text):
        raise ValueError(f"Extra data: char {extra}")
    return value


def dumps(value: Any, *, ensure_ascii: bool = True) -> str:
    """``json.dumps`` with its default separators."""
    if _json is None:  # pragma: no cover - not CPython
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii)
    strings = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    # a new encoder per call: its dict of objects being encoded (cycles) starts empty
    encoder = _json.make_encoder({}, _unserializable, strings, None, ": ", ", ", False, False, True)
    return "".join(encoder(value, 0))
