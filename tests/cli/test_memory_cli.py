"""The memory commands as a user meets them: ledger, its statistics, bad input."""

from __future__ import annotations

import json

from tests.conftest import Cli


def _handover(cli: Cli, sender: str, recipient: str) -> int:
    sent = cli("send", f"@{recipient}", "--handover", "--changed", "x", "--todo", "y", name=sender)
    assert sent.code == 0, sent
    return int(sent.out.strip())


def test_ledger_text_json_and_stats(cli: Cli) -> None:
    for name in ("api", "web"):
        assert cli("join", name).code == 0
    first = _handover(cli, "api", "web")
    second = _handover(cli, "web", "api")
    assert cli("approve", str(first)).code == 0
    assert cli("reject", str(second), "--reason", "later").code == 0
    text = cli("ledger")
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0].split()[:4] == ["ID", "FROM", "TO", "OUTCOME"]
    assert lines[1].split()[:4] == [f"#{first}", "@api", "@web", "approved"]
    assert lines[2].split()[:4] == [f"#{second}", "@web", "@api", "rejected"]
    only = json.loads(cli("ledger", "--agent", "api", "--since", "1h", "--json").out)
    assert [i["id"] for i in only] == [first, second]
    stats = json.loads(cli("ledger", "--stats", "--json").out)
    assert stats["pairs"]["api -> web"]["approval_rate"] == 1.0
    assert stats["agents"]["web"]["total"] == 2
    table = cli("ledger", "--stats").out
    assert "api -> web" in table
    assert "@web" in table


def test_ledger_bad_input(cli: Cli) -> None:
    for args, fragment in (
        (("ledger", "--since", "soon"), "invalid duration"),
        (("ledger", "--agent", "Bad Name"), "invalid name"),
    ):
        result = cli(*args)
        assert result.code != 0
        assert "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert fragment in result.err, result.err
