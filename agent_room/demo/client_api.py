"""A loopback stand-in for the OpenAI Responses API (Codex CLI) and the Gemini API, for
the demo's Codex and Gemini agents and the tests of both clients.

Ported from the stand-in Codex CLI 0.169.0 and Gemini CLI 0.61.0 were first run against.
Scripted by the last user text: ``RUNSHELL: CMD`` makes one shell tool call (Codex
``exec_command``, Gemini ``run_shell_command``), ``RUNESC: CMD`` one the client asks the
user about (Codex: outside its sandbox), ``RUNTOOL: NAME {JSON}`` one call of the offered
tool whose name ends with NAME (an MCP tool, named as the client prefixes it);
``SLOWREPLY`` answers after ``slow`` seconds, ``HELDREPLY`` once ``held`` is set; a tool
result is answered ``TOOL-RESULT-SEEN: ...``; anything else ``PONG: <text>``. It also
answers Codex's title request, Gemini's router classifier (JSON from the schema, integers
at least 1: a 0 fails its check) and Gemini's session summaries. Every request is
recorded. Bodies end with the connection (Gemini hangs on a kept-alive stream without a
length).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple

TITLE_REQUEST = "Generate a concise, single-line task title"
SUMMARY_REQUEST = "Summarize the user's primary intent"


def counted(request: object, reply: str) -> tuple[int, int, int]:
    """The usage an answer reports, as OpenAI's and Google's APIs count it: the input
    (cached part included), its cached part, the output; at four characters a token,
    three quarters of the conversation read from the cache."""
    read = max(1, len(json.dumps(request)) // 4)
    return read, read * 3 // 4, max(1, len(reply) // 4)


class Request(NamedTuple):
    """One request the stand-in received."""

    path: str
    body: dict[str, Any]


def _shell_command(text: str) -> str | None:
    found = re.search(r"RUNSHELL:(.*)", text, re.S)
    return found.group(1).strip() if found else None


def _tool_call(text: str) -> tuple[str, str] | None:
    """``RUNTOOL: NAME {JSON}``: the tool's name (its end) and its arguments."""
    found = re.search(r"RUNTOOL:\s*(\S+)\s+(\{.*\})", text, re.S)
    return (found.group(1), found.group(2)) if found else None


def offered(names: list[str], suffix: str) -> str | None:
    """The offered tool whose name ends with ``suffix`` (the client adds its prefix)."""
    ends = (f"_{suffix}", f".{suffix}")
    return next((n for n in names if n == suffix or n.endswith(ends)), None)


def _responses_tools(body: dict[str, Any]) -> list[str]:
    """The tools a Responses request offers; a namespace's as ``NAMESPACE.NAME``."""
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            inner = [t for t in tool.get("tools") or [] if isinstance(t, dict)]
            names += [f"{tool.get('name')}.{t.get('name')}" for t in inner]
        elif tool.get("name"):
            names.append(str(tool["name"]))
    return names


def _fill(schema: Any) -> Any:
    """A value matching a JSON schema (Gemini's internal JSON calls)."""
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type") or "").lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        return {k: _fill(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "string":
        return "stand-in"
    if kind in {"number", "integer"}:
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return [] if kind == "array" else None


class StandIn:
    """The server, on a free loopback port, for one test."""

    def __init__(self, slow: float = 8.0) -> None:
        self.slow = slow
        self.held = threading.Event()
        """``HELDREPLY`` is answered once this is set (a test holds a turn open)."""
        self.requests: list[Request] = []
        self.reported: list[tuple[int, int, int]] = []
        """The usage of every answer: (input with its cached part, cached, output)."""
        self._lock = threading.Lock()
        self._calls = 0
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                return  # quiet: the requests are recorded

            def do_GET(self) -> None:
                self._json(404, {"error": {"message": "not in the stand-in", "code": 404}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else self._chunked()
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                stand_in.record(self.path, body)
                try:
                    stand_in.answer(self, self.path.split("?")[0], body)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up on the answer (an interrupted turn)

            def _chunked(self) -> bytes:
                data = b""
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()

            def _json(self, code: int, obj: object) -> None:
                blob = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

        self.handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()

    def record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(Request(path, body))
            self._calls += 1

    def saw(self, text: str) -> bool:
        """Whether any request so far carried ``text`` (the model got to read it)."""
        with self._lock:
            bodies = list(self.requests)
        return any(text in json.dumps(r.body, ensure_ascii=False) for r in bodies)

    # -- answers ----------------------------------------------------------------------

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if path.endswith("/responses"):
            self._responses(handler, body)
        elif path.endswith(":streamGenerateContent"):
            self._sse(handler, [(None, self._gemini(body))])
        elif path.endswith(":generateContent"):
            blob = json.dumps(self._gemini(body)).encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(blob)))
            handler.end_headers()
            handler.wfile.write(blob)
        elif path.endswith(":countTokens"):
            self._sse_json(handler, {"totalTokens": 42})
        else:
            self._sse_json(handler, {"error": {"message": "not in the stand-in", "code": 404}})

    def _sse_json(self, handler: BaseHTTPRequestHandler, obj: object) -> None:
        blob = json.dumps(obj).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(blob)))
        handler.end_headers()
        handler.wfile.write(blob)

    @staticmethod
    def _sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, object]]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.close_connection = True
        handler.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            handler.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
            handler.wfile.flush()

    def _decide(self, text: str, tool_result: str | None) -> tuple[str, str]:
        if tool_result is not None:
            return "text", "TOOL-RESULT-SEEN: " + tool_result.strip().replace("\n", " | ")[:200]
        if TITLE_REQUEST in text:
            return "text", "Stand-in title"
        if SUMMARY_REQUEST in text:
            return "text", "Stand-in session summary"
        found = re.search(r"RUNESC:(.*)", text, re.S)
        if found:  # a command the client asks the user about
            return "escalate", found.group(1).strip()
        tool = _tool_call(text)
        if tool:
            return "tool", json.dumps(tool)
        command = _shell_command(text)
        if command:
            return "shell", command
        if "SLOWREPLY" in text:
            time.sleep(self.slow)
        if "HELDREPLY" in text:
            self.held.wait(60)
        return "text", "PONG: " + text.strip().replace("\n", " / ")[-300:]

    def _responses(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        items = body.get("input") or []
        last = items[-1] if items else {}
        result = None
        if last.get("type") == "function_call_output":
            result = str(last.get("output"))
        text = ""
        for item in reversed(items):
            if item.get("role") == "user":
                content = item.get("content")
                text = (
                    content
                    if isinstance(content, str)
                    else " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
                )
                break
        kind, value = self._decide(text, result)
        tool_name, tool_args, namespace = "exec_command", "", None
        if kind == "tool":
            suffix, tool_args = json.loads(value)
            names = _responses_tools(body)
            found = offered(names, suffix)
            if found is None:
                kind, value = "text", f"NO-TOOL {suffix} among {names}"
            else:  # an MCP server's tools come in a namespace (mcp__SERVER)
                namespace, _, tool_name = found.rpartition(".")
                namespace = namespace or None
        with self._lock:
            n = self._calls
        read, cached, wrote = counted(items, value)
        self.reported.append((read, cached, wrote))
        done = {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": {
            "input_tokens": read, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": wrote, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": read + wrote}}}  # fmt: skip
        if kind == "text":
            content = [{"type": "output_text", "text": value, "annotations": []}]
            item = {"type": "message", "id": f"msg_{n}", "role": "assistant",
                    "status": "completed", "content": content}  # fmt: skip
            delta = {"type": "response.output_text.delta", "item_id": f"msg_{n}",
                     "output_index": 0, "content_index": 0, "delta": value}  # fmt: skip
            events: list[tuple[str | None, object]] = [
                ("response.created", {"type": "response.created", "response": {"id": f"resp_{n}"}}),
                ("response.output_item.added", {"type": "response.output_item.added",
                 "output_index": 0, "item": dict(item, status="in_progress", content=[])}),
                ("response.output_text.delta", delta),
                ("response.output_item.done", {"type": "response.output_item.done",
                 "output_index": 0, "item": item}),
            ]  # fmt: skip
        else:
            args: dict[str, str] = {"cmd": value}
            if kind == "escalate":  # outside the sandbox: Codex asks first
                args |= {"sandbox_permissions": "require_escalated", "justification": "stand-in"}
            arguments = tool_args if kind == "tool" else json.dumps(args)
            call = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                    "name": tool_name, "arguments": arguments,
                    "status": "completed"}  # fmt: skip
            if namespace is not None:
                call["namespace"] = namespace
            events = [
                ("response.created", {"type": "response.created", "response": {"id": f"resp_{n}"}}),
                ("response.output_item.done", {"type": "response.output_item.done",
                 "output_index": 0, "item": call}),
            ]  # fmt: skip
        self._sse(handler, [*events, ("response.completed", done)])

    def _gemini(self, body: dict[str, Any]) -> dict[str, Any]:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        parts: list[dict[str, Any]]
        if schema:
            parts = [{"text": json.dumps(_fill(schema))}]
        else:
            contents = body.get("contents") or []
            last = (contents[-1] if contents else {}).get("parts") or []
            answers = [p["functionResponse"] for p in last if "functionResponse" in p]
            texts = [p["text"] for p in last if isinstance(p, dict) and "text" in p]
            result = json.dumps(answers[0].get("response")) if answers else None
            kind, value = self._decide(texts[-1] if texts else "", result)
            if kind == "tool":
                suffix, arguments = json.loads(value)
                names = [
                    str(d.get("name"))
                    for t in body.get("tools") or []
                    for d in (t.get("functionDeclarations") or [] if isinstance(t, dict) else [])
                ]
                found = offered(names, suffix)
                call = {"name": found, "args": json.loads(arguments)}
                parts = (
                    [{"functionCall": call}]
                    if found
                    else [{"text": f"NO-TOOL {suffix} among {names}"}]
                )
            elif kind == "text":
                parts = [{"text": value}]
            else:
                args = {"command": value, "description": "scripted shell call"}
                parts = [{"functionCall": {"name": "run_shell_command", "args": args}}]
        read, cached, wrote = counted(body.get("contents") or [], json.dumps(parts))
        self.reported.append((read, cached, wrote))
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": read,
                "cachedContentTokenCount": cached,
                "candidatesTokenCount": wrote,
                "totalTokenCount": read + wrote,
            },
            "modelVersion": "stand-in",
        }
