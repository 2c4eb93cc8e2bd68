"""A local stand-in for the model API, so a real Claude Code runs offline and scripted.

The client (see DESIGN.md section 6) sends ``HEAD /`` and then ``POST
/v1/messages?beta=true`` with ``stream: true``, and expects server-sent events. It also
asks the model for things of its own (titles, summaries, quota checks with a small
model), so every request gets a sensible answer and a script keys off the conversation,
never off how many requests came before: the rules look at the latest user message
only. A Bash tool call is answered only to a request that offers the Bash tool.

Every request is recorded (method, path, JSON body), so a test can see exactly what the
model was shown. The tests run it as a thread in the test process; ``python -m
agent_room.demo.conversation`` serves one of the demo's scripts from a process of its own.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

MODEL = "claude-standin-1"


class Reply(NamedTuple):
    """What the model answers: text, and optionally one Bash tool call after it."""

    text: str = ""
    bash: str | None = None
    """A shell command for the Bash tool; the turn then stops with ``tool_use``."""
    write: tuple[str, str] | None = None
    """A file (absolute path, content) for the Write tool, instead of a Bash call."""
    call: tuple[str, dict[str, Any]] | None = None
    """Any other tool call, as (tool name, input): ``ToolSearch``, ``SendMessage`` ..."""
    usage: Mapping[str, int] | None = None
    """The usage the reply reports (the Messages API's four counts); None: counted from
    the request and the reply (``usage_for``)."""
    gate: threading.Event | None = None
    """The model answers once this is set (a test holds a turn open; a minute at most)."""

    def tool(self) -> tuple[str, dict[str, Any]] | None:
        """The tool call this reply makes, as (tool name, input), if any."""
        if self.call is not None:
            return self.call
        if self.bash is not None:
            return "Bash", {"command": self.bash, "description": "Run a command"}
        if self.write is not None:
            return "Write", {"file_path": self.write[0], "content": self.write[1]}
        return None


class Rule(NamedTuple):
    """Answer ``reply`` when the latest user message contains ``when``."""

    when: str
    reply: Reply
    after_tool: bool = False
    """Match the result of a tool call (the follow-up of a ``tool_use``) instead of a prompt."""


DONE = Reply("Done.")
"""The answer to a tool result no rule claims: the turn ends."""
OK = Reply("OK.")
"""The answer to anything else no rule claims."""


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, Mapping):
        return ""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return "\n".join(_block_text(b) for b in content)
        return str(content)
    if block.get("type") == "tool_reference":  # a deferred tool ToolSearch loaded
        return f"tool_reference:{block.get('tool_name', '')}"
    return ""


def latest_user(body: Mapping[str, Any]) -> tuple[str, bool]:
    """The text the model is shown since its last answer, and whether it is a tool result.

    That is every message after the last assistant message: the user's prompt (or a tool
    result) and, in recent clients, a ``system`` message right after it that carries
    the hooks' additional context.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    answered = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    texts: list[str] = []
    tool = False
    for message in messages[answered[-1] + 1 if answered else 0 :]:
        content = message.get("content", "")
        blocks = content if isinstance(content, list) else [content]
        tool = tool or any(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks
        )
        texts += [_block_text(b) for b in blocks]
    return "\n".join(texts), tool


def offers_bash(body: Mapping[str, Any], tool: str = "Bash") -> bool:
    """Whether the request lets the model call the Bash tool (the main conversation does),
    or the tool named."""
    return any(isinstance(t, Mapping) and t.get("name") == tool for t in body.get("tools") or [])


class Script:
    """Rules, first match wins; tool results and prompts are matched separately."""

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        self.rules = list(rules)
        self._lock = threading.Lock()

    def add(self, when: str, reply: Reply, *, after_tool: bool = False) -> None:
        """Add a rule (tests add them while agents run)."""
        with self._lock:
            self.rules.append(Rule(when, reply, after_tool))

    def answer(self, body: Mapping[str, Any]) -> Reply:
        """The reply to one request."""
        text, tool = latest_user(body)
        with self._lock:
            rules = list(self.rules)
        reply = next(
            (r.reply for r in rules if r.after_tool == tool and r.when in text),
            DONE if tool else OK,
        )
        call = reply.tool()
        if call is not None and not offers_bash(body, call[0]):
            return Reply(reply.text or OK.text)
        return reply


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    call = reply.tool()
    if reply.text or call is None:
        blocks.append({"type": "text", "text": reply.text or OK.text})
    if call is not None:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": call[0],
                "input": call[1],
            }
        )
    return blocks


def usage_for(reply: Reply, body: Mapping[str, Any]) -> dict[str, int]:
    """The usage a reply reports, as the Messages API words it: the reply's own, or
    counted at four characters a token, the conversation so far mostly read from the
    prompt cache (three quarters), an eighth of it written to the cache, the rest (the
    newest part) uncached; the output from the reply's text and tool call."""
    if reply.usage is not None:
        return {k: int(reply.usage.get(k, 0)) for k in USAGE_KEYS}
    prompt = len(json.dumps(body.get("messages") or [])) // 4 + len(str(body.get("system"))) // 4
    read, written = prompt * 3 // 4, prompt // 8
    call = reply.tool()
    said = len(reply.text or OK.text) + (len(json.dumps(call[1])) if call else 0)
    return {
        "input_tokens": max(1, prompt - read - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": max(1, said // 4),
    }


USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _message(reply: Reply, model: str, usage: Mapping[str, int]) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": "tool_use" if reply.tool() is not None else "end_turn",
        "stop_sequence": None,
        "usage": dict(usage),
    }


def sse_events(
    reply: Reply, model: str, usage: Mapping[str, int] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of a streamed reply, in the Messages API's order: the
    input counts in ``message_start`` (with one output token so far, as the API does),
    the final output count in ``message_delta``."""
    usage = usage if usage is not None else usage_for(reply, {})
    message = _message(reply, model, usage)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opened},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class Replied(NamedTuple):
    """One answer as the stand-in gave it: what a client's record of it should say."""

    id: str
    model: str
    text: str
    usage: dict[str, int]


class Recorded(NamedTuple):
    """One request as the stand-in received it."""

    method: str
    path: str
    body: Any


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the record is the log."""

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.server.api.record(Recorded("HEAD", self.path, None))
        self._send(200, "text/plain", b"")

    def do_GET(self) -> None:
        self.server.api.record(Recorded("GET", self.path, None))
        self._send(200, "application/json", b"{}")

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        api = self.server.api
        api.record(Recorded("POST", self.path, body))
        if not isinstance(body, dict):
            self._send(400, "application/json", b'{"type":"error","error":{"type":"bad"}}')
            return
        path = self.path.partition("?")[0]
        if path.endswith("/count_tokens"):
            tokens = len(json.dumps(body)) // 4
            self._send(200, "application/json", json.dumps({"input_tokens": tokens}).encode())
            return
        if not path.endswith("/messages"):
            self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found"}}')
            return
        reply = api.script.answer(body)
        if reply.gate is not None:
            reply.gate.wait(60)
        model = str(body.get("model") or MODEL)
        usage = usage_for(reply, body)
        if body.get("stream"):
            events = list(sse_events(reply, model, usage))
            message = events[0][1]["message"]
            stream = "".join(
                f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events
            )
            self._send(200, "text/event-stream", stream.encode())
        else:
            message = _message(reply, model, usage)
            self._send(200, "application/json", json.dumps(message).encode())
        api.replied.append(Replied(message["id"], model, reply.text, usage))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: ModelApi) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api


class ModelApi:
    """The stand-in server on 127.0.0.1 (a free port), serving in a background thread."""

    def __init__(self, script: Script, *, log: Path | None = None) -> None:
        self.script = script
        self.log = log
        """A JSON-lines file that gets every request too (for a server in another process)."""
        self.requests: list[Recorded] = []
        self.replied: list[Replied] = []
        """Every answer to ``/messages``, with the usage it reported."""
        self._lock = threading.Lock()
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL for ``ANTHROPIC_BASE_URL``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def record(self, request: Recorded) -> None:
        """Keep one request (thread-safe)."""
        with self._lock:
            self.requests.append(request)
            if self.log is not None:
                with self.log.open("a") as out:
                    out.write(json.dumps(request._asdict()) + "\n")

    def start(self) -> ModelApi:
        """Serve in the background."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ModelApi:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()
