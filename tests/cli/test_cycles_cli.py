"""A circular handover (A -> B -> ... -> A) is told to its sender at once and listed with its
cycle by ``handovers``, in text and JSON (seed 002), not only in the console."""

from __future__ import annotations

import json

from tests.conftest import Cli


def _hand(cli: Cli, sender: str, recipient: str) -> tuple[int, str]:
    sent = cli("send", f"@{recipient}", "--handover", "take the report", name=sender)
    assert sent.code == 0, sent.err
    return int(sent.out.strip()), sent.err


def test_the_sender_and_the_handovers_list_see_the_cycle(cli: Cli) -> None:
    for name in ("a", "b", "c"):
        assert cli("join", name).code == 0
    first, err_first = _hand(cli, "a", "b")
    _second, err_second = _hand(cli, "b", "c")
    assert "cycle" not in err_first + err_second
    third, err_third = _hand(cli, "c", "a")
    assert "closes a cycle: @c → @a → @b → @c" in err_third, err_third
    assert "Traceback" not in err_third

    listed = cli("handovers")
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert lines[0].startswith(f"#{first}  @a -> @b")
    assert "cycle" not in lines[0]
    assert lines[2].startswith(f"#{third}  @c -> @a")
    assert "⚠ closes a cycle: @c → @a → @b → @c" in lines[2]

    rows = {r["message_id"]: r for r in json.loads(cli("handovers", "--json").out)}
    assert rows[third]["cycle"] == ["c", "a", "b", "c"]
    assert rows[third]["cycle_text"] == "@c → @a → @b → @c"
    assert rows[first]["cycle"] is None
