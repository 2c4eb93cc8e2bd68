"""What a Codex or Gemini CLI agent spent, read from the client's own session file (Codex's
rollout ``token_count`` events, Gemini's chat ``tokens``): each request the room counts
is one the stand-in answered, with the tokens it reported; Codex's stand-in model has no
price until the operator sets one, Gemini's is priced by genai-prices."""

from __future__ import annotations

import json
from typing import Any

from tests.clients.conftest import ClientRoom


def _requests(clients: ClientRoom, name: str) -> list[tuple[int, int, int, int, Any, str]]:
    room = clients.open()
    try:
        found = room.store.conn.execute(
            "SELECT input, output, cache_read, cache_write, cost_usd, model FROM usage"
            " WHERE name = $1 ORDER BY id",
            (name,),
        ).fetchall()
    finally:
        room.close()
    return [tuple(r) for r in found]


def test_usage_comes_from_the_clients_own_records(clients: ClientRoom, kind: str) -> None:
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    result = clients.run("usage", "--since", "1d", "--json")
    assert result.code == 0, result.err
    clients.wait(lambda: _requests(clients, "worker"), 30, "worker")
    reported = {(read - cached, wrote, cached, 0) for read, cached, wrote in clients.api.reported}
    counted = _requests(clients, "worker")
    assert {r[:4] for r in counted} <= reported
    assert all(r[2] > 0 for r in counted)  # the cached part came through
    (line,) = json.loads(clients.run("usage", "--since", "1d", "--json").out)["lines"]
    assert line["input_tokens"] == sum(r[0] for r in counted)
    if kind == "codex":
        assert {r[5] for r in counted} == {"stand-in-model"}
        assert line["cost_usd"] is None  # no price for the stand-in's model
        priced = clients.run("usage", "price", "stand-in-model", "--input", "1", "--output", "4")
        assert priced.code == 0, priced.err
        (line,) = json.loads(clients.run("usage", "--since", "1d", "--json").out)["lines"]
        expected = sum(r[0] + r[2] for r in counted) * 1 + sum(r[1] for r in counted) * 4
        assert line["cost_usd"] == round(expected / 1_000_000, 6)
    else:
        assert all(r[4] is not None and r[4] > 0 for r in counted)
        assert line["cost_usd"] > 0
