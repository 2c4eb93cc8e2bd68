"""``agent-room ask`` where the repository's agent runs Codex: ``codex exec --json`` there,
resumed with ``codex exec resume`` by the intercom's rules, registered under the asker."""

from __future__ import annotations

import json
import os

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import ClientRoom, client_binary
from tests.conftest import require_tool


def test_ask_runs_codex_headless_and_resumes_its_session(
    clients: ClientRoom, standin: StandIn
) -> None:
    binary = client_binary("codex")
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"codex at {binary}")
    clients.start("api", "codex")
    clients.type("api", "say hello")
    clients.wait(lambda: clients.member("api").get("state") == "idle", 60, "api")

    first = clients.run("ask", "api", "which port does the tasks API listen on? (q-1)")
    assert first.code == 0, first.err
    assert first.out == "PONG: which port does the tasks API listen on? (q-1)\n"
    again = clients.run("ask", "api", "and which port does the tasks API use for tls? (q-2)")
    assert again.code == 0, again.err
    assert "RESUMING" in again.err
    assert any(
        "(q-1)" in json.dumps(r.body) and "(q-2)" in json.dumps(r.body) for r in standin.requests
    )  # the resumed thread carried the first question
    (repo,) = json.loads(clients.run("intercom", "--json").out)
    (session,) = repo["sessions"]
    assert session["message_count"] == 2
    assert clients.member("ask-api")["agent"] == "codex"  # its hooks registered it
