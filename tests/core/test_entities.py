"""The entity registry's pure rules: strategies, names, extraction."""

from __future__ import annotations

import pytest

from agent_room.core.entities import (
    Known,
    Mention,
    best_match,
    check_strategy,
    from_handover,
    from_items,
    from_text,
    key,
    merge,
)
from agent_room.turn.core.errors import BadInput

KNOWN = Known("TypeScript", "Used for type safety", 0.6, 1)


def test_the_seed_strategies() -> None:
    new = Mention("tool", "TypeScript", "Compile target ES2020", 0.4)
    assert merge(KNOWN, new).context == "Used for type safety. Compile target ES2020"
    assert merge(KNOWN, new, "newest_wins").context == "Compile target ES2020"
    assert merge(KNOWN, new, "highest_confidence").context == "Used for type safety"
    surer = Mention("tool", "TypeScript", "Strict mode", 0.9)
    assert merge(KNOWN, surer, "highest_confidence").context == "Strict mode"
    manual = merge(KNOWN, new, "manual")
    assert manual.conflict
    assert manual.context == "Used for type safety"
    same = Mention("tool", "TypeScript", "Used for type safety", 0.5)
    assert merge(KNOWN, same).context == "Used for type safety"  # nothing new, no growth
    with pytest.raises(BadInput, match="invalid merge strategy"):
        check_strategy("loudest")


def test_fuzzy_match_at_the_threshold() -> None:
    files = {1: key("file", "src/api/tasks.py"), 3: "lib/web/session_hook_controller.ex"}
    assert best_match(key("file", "./src/api/task.py"), files, 0.85, "file") == 1
    assert best_match("src/web/tasks.py", files, 0.85, "file") is None  # another folder
    assert best_match("lib/web/hooks_controller.ex", files, 0.85, "file") is None
    assert best_match("typescrpt", {2: key("tool", "typescript")}, 0.85) == 2
    assert best_match("handler_2", {4: "handler_1"}, 0.85) is None  # numbers differ
    assert best_match("handlr_1", {4: "handler_1"}, 0.85) == 4


def test_extraction_from_handovers_text_and_tool_calls() -> None:
    fields = {
        "what_changed": "Added GET /tasks in api/tasks.py (list_tasks())",
        "what_to_do": "Build the list view with React, ask @backend",
        "files": "api/tasks.py; web/list.tsx",
        "contract": "Task = { id: string, done: boolean }",
    }
    found = {(m.type, m.name) for m in from_handover(fields)}
    assert {
        ("file", "api/tasks.py"),
        ("file", "web/list.tsx"),
        ("module", "api.tasks"),
        ("endpoint", "GET /tasks"),
        ("function", "list_tasks"),
        ("contract", "Task"),
        ("tool", "React"),
        ("service", "backend"),
    } <= found
    assert {(m.type, m.name) for m in from_text("we use typescript. Go is fine, go home")} == {
        ("tool", "TypeScript"),
        ("tool", "Go"),
    }
    items = [("changed", "lib/a.ex"), ("read", "mix.exs"), ("command", "mix test --trace")]
    assert {(m.type, m.name) for m in from_items(items)} == {
        ("file", "lib/a.ex"),
        ("file", "mix.exs"),
        ("tool", "mix"),
    }
