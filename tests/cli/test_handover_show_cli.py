"""``handovers show ID`` and ``handovers --json`` for handovers that carry no code (the
sender works outside any git repository) and for ids that are not handovers."""

from __future__ import annotations

import json

from tests.cli.conftest import one_line_error
from tests.conftest import Cli


def test_a_handover_without_code_says_so(cli: Cli) -> None:
    assert cli("join", "api").code == 0
    assert cli("join", "web").code == 0
    sent = cli("send", "@web", "--handover", "--changed", "x", "--todo", "y", name="api")
    assert sent.code == 0, sent.err
    hid = sent.out.strip()
    shown = cli("handovers", "show", hid)
    assert shown.code == 0, shown.err
    assert shown.out.startswith(f"#{hid}  @api -> @web  (pending)")
    assert "code: none recorded" in shown.out
    data = json.loads(cli("handovers", "show", hid, "--json").out)
    assert data["code"] is None
    assert data["fields"]["what_to_do"] == "y"
    assert [h["code"] for h in json.loads(cli("handovers", "--json").out)] == [None]
    chat = cli("send", "@web", "hello", name="api").out.strip()
    one_line_error(cli("handovers", "show", chat), 1, f"no handover #{chat}")
    one_line_error(cli("handovers", "show", "x1"), 2, "invalid id")
