"""agent-room memory settings: the handover context's budget, shown and changed."""

from __future__ import annotations

import json

from tests.conftest import Cli


def test_memory_settings_show_change_and_refuse(cli: Cli) -> None:
    shown = cli("memory", "settings")
    assert shown.code == 0, shown
    assert shown.out == "handover context budget: 5000 tokens (estimated as characters / 4)\n"
    changed = cli("memory", "settings", "--budget", "8000")
    assert changed.code == 0, changed
    assert "budget: 8000 tokens" in changed.out
    assert json.loads(cli("memory", "settings", "--json").out) == {"budget": 8000}
    for bad, fragment in (("0", "invalid count"), ("lots", "invalid count"), ("50", "budget")):
        result = cli("memory", "settings", "--budget", bad)
        assert result.code != 0, (bad, result)
        assert "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert fragment in result.err, result.err
    assert json.loads(cli("memory", "settings", "--json").out) == {"budget": 8000}
