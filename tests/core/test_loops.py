"""The fleet-wide loop breaker's pure parts: settings, stored paths, the words it uses."""

from __future__ import annotations

from agent_room.turn.core.loops import (
    DEFAULT_PER_EDGE,
    DEFAULT_WINDOW,
    PER_EDGE_KEY,
    WINDOW_KEY,
    describe,
    held_reason,
    load_path,
    sender_notice,
    settings_from,
    store_path,
)


def test_settings_with_defaults_for_what_is_missing_or_unusable() -> None:
    assert settings_from({}) == (DEFAULT_PER_EDGE, DEFAULT_WINDOW) == (10, 60.0)
    assert settings_from({PER_EDGE_KEY: 3, WINDOW_KEY: 30}) == (3, 30.0)
    assert settings_from({PER_EDGE_KEY: 0}) == (0, 60.0)  # off
    assert settings_from({PER_EDGE_KEY: -1, WINDOW_KEY: 0}) == (10, 60.0)
    assert settings_from({PER_EDGE_KEY: "x", WINDOW_KEY: None}) == (10, 60.0)
    assert describe(0, 60) == "off"
    assert describe(10, 60).startswith("10/60s")


def test_paths_and_texts() -> None:
    cycle = ("c", "a", "b", "c")
    assert load_path(store_path(cycle)) == cycle
    reason = held_reason(4, cycle)
    assert reason.startswith("held by the loop breaker: loop #4 @c → @a → @b → @c;")
    assert reason.endswith("agent-room loops release 4")
    assert sender_notice(9, 4, cycle).startswith("message #9 is held, not delivered")
