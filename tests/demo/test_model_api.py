"""The model stand-in speaks the Messages API the way the client expects, over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_room.demo.conversation import PROMPTS
from agent_room.demo.model_api import ModelApi, Reply, Rule, Script, latest_user
from tests.poll import wait_for

BASH = [{"name": "Bash", "input_schema": {"type": "object"}}]


@pytest.fixture
def api() -> Iterator[ModelApi]:
    script = Script(
        [
            Rule("run it", Reply("Running.", bash="agent-room who")),
            Rule("queued", Reply("All sent."), after_tool=True),
        ]
    )
    with ModelApi(script) as served:
        yield served


def _post(api: ModelApi, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        api.url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        found.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return found


def _user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def test_a_streamed_tool_call_in_the_order_the_client_reads(api: ModelApi) -> None:
    body = {"model": "m", "stream": True, "tools": BASH}
    body["messages"] = [_user({"type": "text", "text": "please run it"})]
    kind, raw = _post(api, "/v1/messages?beta=true", body)
    assert kind == "text/event-stream"
    events = _events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "Running."}
    assert events[4][1]["content_block"]["name"] == "Bash"
    tool_input = json.loads(events[5][1]["delta"]["partial_json"])
    assert tool_input["command"] == "agent-room who"
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"
    assert api.requests[-1].body == body  # recorded as sent


def test_a_tool_result_ends_the_turn(api: ModelApi) -> None:
    body: dict[str, Any] = {"model": "m", "stream": False, "tools": BASH}
    body["messages"] = [
        _user({"type": "text", "text": "please run it"}),
        {"role": "assistant", "content": [{"type": "text", "text": "Running."}]},
        _user({"type": "tool_result", "tool_use_id": "t", "content": "message #1 queued"}),
    ]
    kind, raw = _post(api, "/v1/messages", body)
    assert kind == "application/json"
    message = json.loads(raw)
    assert message["stop_reason"] == "end_turn"
    assert message["content"] == [{"type": "text", "text": "All sent."}]


def test_side_requests_get_text_never_a_tool_call(api: ModelApi) -> None:
    # a title or summary request carries the prompt but offers no tools
    body = {"model": "m", "messages": [_user({"type": "text", "text": "please run it"})]}
    message = json.loads(_post(api, "/v1/messages", body)[1])
    assert [b["type"] for b in message["content"]] == ["text"]
    assert message["stop_reason"] == "end_turn"
    tokens = json.loads(_post(api, "/v1/messages/count_tokens", body)[1])
    assert tokens["input_tokens"] > 0
    head = urllib.request.Request(api.url + "/", method="HEAD")
    with urllib.request.urlopen(head, timeout=10) as response:
        assert response.status == 200


def test_the_hooks_context_after_the_prompt_is_part_of_what_the_model_is_shown() -> None:
    body = {
        "messages": [
            _user({"type": "text", "text": "earlier"}),
            {"role": "assistant", "content": "ok"},
            _user({"type": "text", "text": "[agent-room] 1 new message from @backend (#1)"}),
            {"role": "system", "content": [{"type": "text", "text": "GET /tasks is live"}]},
        ]
    }
    text, tool = latest_user(body)
    assert "new message from @backend" in text
    assert "GET /tasks is live" in text
    assert "earlier" not in text
    assert not tool


def test_it_runs_as_a_process_of_its_own(tmp_path: Path) -> None:
    url_file = tmp_path / "url"
    log = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "agent_room.demo.conversation", "--url-file", str(url_file)]
    proc = subprocess.Popen([*command, "--log", str(log)], stderr=subprocess.DEVNULL)
    try:
        wait_for(url_file.exists)
        url = url_file.read_text().strip()
        body = {"model": "m", "tools": BASH}
        body["messages"] = [_user({"type": "text", "text": PROMPTS["infra"]})]
        request = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            message = json.loads(response.read())
        assert message["content"][-1]["input"]["command"].startswith("agent-room send @backend")
        (recorded,) = [json.loads(line) for line in log.read_text().splitlines()]
        assert recorded["body"] == body
    finally:
        proc.terminate()
        proc.wait(timeout=10)
