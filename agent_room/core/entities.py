"""The shared entity registry's rules (seed 002): what counts as an entity, how two
mentions of one are merged, and how entities are found in what agents write and do.

One registry serves every agent and session, so that "TypeScript" said by two agents is
one entity with both contexts, not two. Near-duplicates are matched per type by the
store's fuzzy search (rapidfuzz); this module decides what a match does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, process

from agent_room.core.transcript import one_line
from agent_room.turn.core.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

TYPES = ("file", "module", "function", "endpoint", "contract", "service", "tool")
STRATEGIES = ("newest_wins", "highest_confidence", "merge_context", "manual")
DEFAULT_STRATEGY = "merge_context"
DEFAULT_THRESHOLD = 0.85
"""Similarity (0..1, rapidfuzz's ratio / 100) at or above which two names are one entity."""
MAX_CONTEXT = 1000
"""Characters of context an entity keeps (seed 002's ``maxContextLength``)."""

KNOWN_TOOLS = (
    "TypeScript",
    "JavaScript",
    "Python",
    "React",
    "Node.js",
    "PostgreSQL",
    "SQLite",
    "Redis",
    "Docker",
    "Kubernetes",
    "GraphQL",
    "Terraform",
    "pytest",
    "Vite",
    "Next.js",
    "Elixir",
    "Phoenix",
    "Rust",
    "Go",
)
"""Tools and languages recognised by name in free text."""
_COMMAND_TOOLS = frozenset(
    {"git", "npm", "pnpm", "yarn", "pytest", "mix", "cargo", "go", "make", "docker", "uv", "pip"}
)

_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|rb|ex|exs|java|kt"
    r"|swift|c|h|cpp|hpp|cs|md|json|ya?ml|toml|sql|sh|css|scss|html|proto|tf))\b"
)
_ENDPOINT = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE)\s+(/[\w/{}:.-]*)")
_FUNCTION = re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(\)")
_CONTRACT = re.compile(r"\b([A-Z]\w+)\s*=\s*\{")
_SERVICE = re.compile(r"@([a-z0-9][a-z0-9_-]{0,31})\b")
_TOOL_WORDS = {t.lower(): t for t in KNOWN_TOOLS}
_WORD = re.compile(r"[A-Za-z][\w.+#-]*")
_NUMBERS = re.compile(r"\d+")


def check_type(kind: str) -> str:
    """The type if it is one the registry knows, else ``BadInput``."""
    if kind not in TYPES:
        raise BadInput(f"invalid entity type {kind!r}: use one of {', '.join(TYPES)}")
    return kind


def check_strategy(strategy: str) -> str:
    """The merge strategy if it is one of the seed's, else ``BadInput``."""
    if strategy not in STRATEGIES:
        raise BadInput(f"invalid merge strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    return strategy


def key(kind: str, name: str) -> str:
    """The name as compared: case and surrounding space do not make another entity; a
    file's ``./`` prefix neither."""
    text = " ".join(name.split()).lower()
    if kind == "file":
        text = text.removeprefix("./")
    return text


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity as one agent named it, once."""

    type: str
    name: str
    context: str = ""
    confidence: float = 0.5


@dataclass(frozen=True, slots=True)
class Known:
    """What the registry holds of an entity."""

    name: str
    context: str
    confidence: float
    version: int


@dataclass(frozen=True, slots=True)
class Merged:
    """The entity after a mention was merged in; ``conflict`` when the operator decides."""

    name: str
    context: str
    confidence: float
    changed: bool
    conflict: bool = False


def merge_contexts(first: str, second: str, limit: int = MAX_CONTEXT) -> str:
    """Both contexts, the second only where it adds something, cut to ``limit``."""
    parts = [p for p in (first.strip(), second.strip()) if p]
    if len(parts) == 2 and parts[1].lower() in parts[0].lower():
        parts = parts[:1]
    text = ". ".join(p.rstrip(".") for p in parts)
    return text[:limit]


def merge(known: Known, mention: Mention, strategy: str = DEFAULT_STRATEGY) -> Merged:
    """Apply ``strategy`` to a mention of a known entity."""
    if strategy == "newest_wins":
        context = mention.context or known.context
        return Merged(known.name, context[:MAX_CONTEXT], mention.confidence, True)
    if strategy == "highest_confidence":
        if mention.confidence > known.confidence:
            context = mention.context or known.context
            return Merged(known.name, context[:MAX_CONTEXT], mention.confidence, True)
        return Merged(known.name, known.context, known.confidence, False)
    if strategy == "manual":
        same = not mention.context or mention.context.strip() == known.context.strip()
        return Merged(known.name, known.context, known.confidence, False, conflict=not same)
    context = merge_contexts(known.context, mention.context)
    confidence = max(known.confidence, mention.confidence)
    return Merged(known.name, context, confidence, True)


def best_match(
    name: str, choices: Mapping[int, str], threshold: float, kind: str = ""
) -> int | None:
    """The id of the choice most like ``name`` (rapidfuzz's ratio), if it reaches
    ``threshold`` (0..1). Names whose numbers differ are never alike (``handler_1`` and
    ``handler_2``, ``v1`` and ``v2``); files are compared by their base names within one
    folder (two files of a folder share a long path, not an identity)."""
    numbers = _NUMBERS.findall(name)
    choices = {i: k for i, k in choices.items() if _NUMBERS.findall(k) == numbers}
    if kind == "file":
        folder, _, base = name.rpartition("/")
        choices = {
            i: k.rpartition("/")[2] for i, k in choices.items() if k.rpartition("/")[0] == folder
        }
        name = base
    found = process.extractOne(name, choices, scorer=fuzz.ratio, score_cutoff=threshold * 100)
    return None if found is None else int(found[2])


def ranked(query: str, choices: Mapping[int, str], limit: int = 50) -> list[int]:
    """Ids of the choices that match ``query`` best (a word of it, in any order)."""
    found = process.extract(query, choices, scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
    return [int(f[2]) for f in found]


def _add(found: dict[tuple[str, str], Mention], mention: Mention) -> None:
    found.setdefault((mention.type, key(mention.type, mention.name)), mention)


def from_text(text: str, *, context: str = "", confidence: float = 0.5) -> list[Mention]:
    """Files, endpoints, functions, contracts, services (``@name``) and known tools named
    in ``text``, each once."""
    found: dict[tuple[str, str], Mention] = {}
    for match in _FILE.finditer(text):
        _add(found, Mention("file", match.group(1), context, confidence))
        module = match.group(1).rsplit(".", 1)[0].replace("/", ".")
        if match.group(1).endswith(".py") and "." in module:
            _add(found, Mention("module", module, context, confidence))
    for match in _ENDPOINT.finditer(text):
        _add(found, Mention("endpoint", f"{match.group(1)} {match.group(2)}", context, confidence))
    for match in _FUNCTION.finditer(text):
        _add(found, Mention("function", match.group(1), context, confidence))
    for match in _CONTRACT.finditer(text):
        _add(found, Mention("contract", match.group(1), context, confidence))
    for match in _SERVICE.finditer(text):
        _add(found, Mention("service", match.group(1), context, confidence))
    for word in _WORD.findall(text):
        tool = _TOOL_WORDS.get(word.lower().rstrip("."))
        if tool is not None and (tool != "Go" or word == "Go"):
            _add(found, Mention("tool", tool, context, confidence))
    return list(found.values())


def from_handover(fields: dict[str, str]) -> list[Mention]:
    """The entities of a handover's fields: its files, its contract's types, and whatever
    its text names; the field it came from is the context."""
    found: dict[tuple[str, str], Mention] = {}
    for name in (p.strip() for p in re.split(r"[,;\n]", fields.get("files", "")) if p.strip()):
        _add(found, Mention("file", name.lstrip("-* "), "listed in a handover", 0.9))
    contract = fields.get("contract", "")
    for mention in from_text(contract, context=one_line(contract, 200), confidence=0.9):
        _add(found, mention)
    for field in ("what_changed", "what_to_do", "breaking", "notes"):
        text = fields.get(field, "")
        for mention in from_text(text, context=one_line(text, 200), confidence=0.7):
            _add(found, mention)
    return list(found.values())


def from_items(items: Iterable[tuple[str, str]]) -> list[Mention]:
    """The entities of transcript items (kind, text): files read and changed, the tools
    commands ran."""
    found: dict[tuple[str, str], Mention] = {}
    for kind, text in items:
        if kind in ("read", "changed"):
            _add(found, Mention("file", text, f"{kind} by the session", 0.8))
        elif kind == "command":
            first = text.split(maxsplit=1)[0] if text.split() else ""
            if first in _COMMAND_TOOLS:
                _add(found, Mention("tool", first, f"ran: {text[:120]}", 0.6))
    return list(found.values())
