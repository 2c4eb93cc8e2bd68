"""``agent-room ask`` and ``agent-room intercom`` as a user runs them, with a stand-in
client (``fake_claude.py``) in place of ``claude -p``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_room.plugin import plugin_dir
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from tests.conftest import Cli, Result
from tests.poll import wait_for

FAKE = Path(__file__).with_name("fake_claude.py")


class Fake:
    """The stand-in client of one test: its runs, and the room's CLI with it in place."""

    def __init__(self, tmp: Path, cli: Cli) -> None:
        self.cli = cli
        self.log = tmp / "claude-runs.jsonl"
        self.repo = tmp / "api"
        self.repo.mkdir()
        self.binary = tmp / "claude"
        self.binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.binary.chmod(0o755)
        self.env = {"AGENT_ROOM_CLAUDE": str(self.binary), "FAKE_CLAUDE_LOG": str(self.log)}

    def ask(self, *args: str, stdin: str | None = None, **env: str) -> Result:
        return self.cli("ask", *args, stdin=stdin, env={**self.env, **env})

    def runs(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [line for line in lines if "argv" in line]

    def shell(self, script: str, **env: str) -> subprocess.CompletedProcess[str]:
        """``script`` in bash with stdin an open pipe nobody writes to or closes: what an
        agent's Bash tool or a captured ``$(...)`` gives; a client that inherits it hangs."""
        full = self.cli.env({**self.env, **env, "REPO": str(self.repo)})
        reader, writer = os.pipe()  # the writer stays open until the shell is done
        try:
            proc = subprocess.Popen(
                ["bash", "-c", script],
                stdin=reader,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full,
                text=True,
                cwd=self.repo.parent,
                start_new_session=True,
            )
            os.close(reader)
            try:
                out, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.communicate()
                raise
        finally:
            os.close(writer)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def fake(tmp_path: Path, cli: Cli) -> Fake:
    return Fake(tmp_path, cli)


def _events(room_home: Path, kind: str) -> list[dict[str, Any]]:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        return [e.model_dump() for e in audit_events(room) if e.kind == kind]
    finally:
        room.close()


# -- asking and printing ------------------------------------------------------------------


def test_the_answer_alone_goes_to_stdout(fake: Fake) -> None:
    result = fake.ask(str(fake.repo), "How", "do tokens refresh?")
    assert result.code == 0, result.err
    assert result.out == "answer to: How do tokens refresh?\n"
    assert "[Intercom] Using parent session: operator" in result.err
    assert "Decision: STARTING NEW SESSION" in result.err
    (run,) = fake.runs()
    assert run["cwd"] == str(fake.repo.resolve())
    assert run["stdin"] == "/dev/null"  # stdin closed for the client
    assert run["argv"][:4] == ["-p", "--output-format", "json", "--max-turns"]
    assert run["argv"][run["argv"].index("--plugin-dir") + 1] == str(plugin_dir())
    assert run["env"]["AGENT_ROOM_NAME"] == "ask-api"
    assert "AGENT_ROOM_PARENT" not in run["env"]  # the operator asked


def test_the_question_from_a_file_or_stdin(fake: Fake, tmp_path: Path) -> None:
    question = tmp_path / "q.txt"
    question.write_text("From a file?\n")
    assert fake.ask(str(fake.repo), "--file", str(question)).out == "answer to: From a file?\n"
    assert fake.ask(str(fake.repo), stdin="From stdin?").out == "answer to: From stdin?\n"
    assert fake.ask(str(fake.repo), "--file", "-", stdin="Dash?").out == "answer to: Dash?\n"


def test_json_prints_the_whole_record(fake: Fake) -> None:
    result = fake.ask(str(fake.repo), "auth tokens?", "--json", FAKE_CLAUDE_MODE="array")
    assert result.code == 0, result.err
    record = json.loads(result.out)
    assert record["result"] == "answer to: auth tokens?"
    assert record["decision"] == "new"
    assert record["reason"] == "no session of this parent here"
    assert record["cost_usd"] == pytest.approx(0.01)
    assert record["turns"] == 2
    assert record["duration_ms"] == 12
    assert record["session_id"] == json.loads(fake.log.read_text().splitlines()[-1])["session"]
    assert {"repo", "parent", "asker", "ask_id", "answer_id", "duration_s"} <= set(record)


def test_quiet_silences_the_reasoning(fake: Fake) -> None:
    result = fake.ask(str(fake.repo), "q?", "--quiet")
    assert result.code == 0
    assert result.err == ""


def test_repo_by_a_members_name(fake: Fake, room: Room, agent_proc: Any) -> None:
    room.store.register(
        {"session_id": "sess-api", "cwd": str(fake.repo), "state": "idle"},
        wanted="api",
        explicit=True,
        at=time.time(),
        alive=lambda *_a: True,
    )
    result = fake.ask("@api", "what is the schema?")
    assert result.code == 0, result.err
    assert fake.runs()[0]["cwd"] == str(fake.repo.resolve())


def test_max_turns_default_comes_from_the_rooms_settings(fake: Fake) -> None:
    fake.ask(str(fake.repo), "one")
    assert fake.cli("intercom", "settings", "--max-turns", "4").code == 0
    fake.ask(str(fake.repo), "two", "--new")
    fake.ask(str(fake.repo), "three", "--new", "--max-turns", "2")
    turns = [r["argv"][r["argv"].index("--max-turns") + 1] for r in fake.runs()]
    assert turns == ["10", "4", "2"]


# -- captured: the seed's hang ------------------------------------------------------------


def test_captured_in_a_variable(fake: Fake) -> None:
    done = fake.shell('answer=$(agent-room ask "$REPO" "captured?" 2>/dev/null); echo "[$answer]"')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[answer to: captured?]\n"


def test_redirected_to_a_file(fake: Fake, tmp_path: Path) -> None:
    out = tmp_path / "answer.txt"
    done = fake.shell(f'agent-room ask "$REPO" "to a file?" > "{out}" 2>/dev/null')
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "answer to: to a file?\n"


def test_in_a_pipe(fake: Fake) -> None:
    done = fake.shell('agent-room ask --quiet "$REPO" "in a pipe?" | tr a-z A-Z')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ANSWER TO: IN A PIPE?\n"


# -- the parent and the resume rules -------------------------------------------------------


def test_the_asking_session_is_the_parent(fake: Fake, room: Room) -> None:
    room.store.register(
        {"session_id": "sess-web", "cwd": "/w", "state": "idle"},
        wanted="web",
        explicit=True,
        at=time.time(),
        alive=lambda *_a: True,
    )
    result = fake.ask(str(fake.repo), "auth tokens?", "--json", CLAUDE_CODE_SESSION_ID="sess-web")
    record = json.loads(result.out)
    assert (record["parent"], record["asker"]) == ("sess-web", "web")
    assert fake.runs()[0]["env"]["AGENT_ROOM_PARENT"] == "sess-web"
    assert "CLAUDE_CODE_SESSION_ID" not in fake.runs()[0]["env"]
    # the same repository asked by the operator: another parent, a new session
    other = json.loads(fake.ask(str(fake.repo), "auth tokens again?", "--json").out)
    assert other["decision"] == "new"
    assert other["parent"] == "operator"
    tree = json.loads(fake.cli("tree", "--json").out)
    (web,) = [node for node in tree if node["label"] == "web"]
    assert [c["kind"] for c in web["children"]] == ["intercom"]
    assert web["children"][0]["session_id"] == record["session_id"]
    assert "(intercom)" not in fake.cli("tree").out  # state shown: [ended]


def test_related_resumes_unrelated_starts_new(fake: Fake) -> None:
    first = json.loads(fake.ask(str(fake.repo), "How do auth tokens refresh?", "--json").out)
    again = json.loads(
        fake.ask(str(fake.repo), "Follow up: where is the refresh code?", "--json").out
    )
    other = json.loads(fake.ask(str(fake.repo), "Which CSS framework?", "--json").out)
    assert again["decision"] == "resume"
    assert again["session_id"] == first["session_id"]
    assert again["cost_usd"] == pytest.approx(0.01)  # the client's total went 0.01 -> 0.02
    assert again["session_cost_usd"] == pytest.approx(0.02)
    assert other["decision"] == "new"
    assert other["session_id"] != first["session_id"]
    resumed = [r["resume"] for r in fake.runs()]
    assert resumed == [None, first["session_id"], None]


def test_new_and_resume_override(fake: Fake) -> None:
    first = json.loads(fake.ask(str(fake.repo), "auth tokens?", "--json").out)
    forced = json.loads(fake.ask(str(fake.repo), "auth tokens?", "--new", "--json").out)
    assert forced["decision"] == "new"
    back = json.loads(
        fake.ask(str(fake.repo), "css?", "--resume", first["session_id"], "--json").out
    )
    assert back["decision"] == "resume"
    assert back["session_id"] == first["session_id"]
    assert fake.ask(str(fake.repo), "x", "--new", "--resume", "y").code == 2


def test_a_session_the_client_forgot_falls_back_to_a_new_one(fake: Fake) -> None:
    first = json.loads(fake.ask(str(fake.repo), "auth tokens?", "--json").out)
    result = fake.ask(str(fake.repo), "also the auth tokens?", FAKE_CLAUDE_MODE="unknown")
    assert result.code == 0, result.err
    assert f"no longer knows session {first['session_id']}: starting a new one" in result.err
    listed = json.loads(fake.cli("intercom", "--json").out)
    ids = [s["session_id"] for s in listed[0]["sessions"]]
    assert first["session_id"] not in ids
    assert len(ids) == 1


def test_two_asks_at_once_never_resume_the_same_session(fake: Fake) -> None:
    first = json.loads(fake.ask(str(fake.repo), "auth tokens?", "--json").out)
    env = fake.cli.env({**fake.env, "FAKE_CLAUDE_DELAY": "2"})
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agent_room", "ask", str(fake.repo), q, "--json"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for q in ("also the auth tokens?", "additionally the auth tokens?")
    ]
    records = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    decisions = sorted(r["decision"] for r in records)
    assert decisions == ["new", "resume"]
    resumed = [r for r in records if r["decision"] == "resume"]
    assert resumed[0]["session_id"] == first["session_id"]
    assert [r["resume"] for r in fake.runs()].count(first["session_id"]) == 1


def test_cleanup_keeps_the_session_limit(fake: Fake, room_home: Path) -> None:
    assert fake.cli("intercom", "settings", "--session-limit", "2").code == 0
    for n in range(3):  # other parents' sessions
        fake.ask(str(fake.repo), f"topic{n}", "--new", CLAUDE_CODE_SESSION_ID=f"other-{n}")
    result = fake.ask(str(fake.repo), "mine", "--new")
    assert "[Intercom] Session cleanup for" in result.err
    listed = json.loads(fake.cli("intercom", "--json").out)[0]["sessions"]
    assert sorted(s["topic"] for s in listed) == ["mine", "topic2"]
    assert len(_events(room_home, "intercom.forgotten")) == 2


# -- failures: one line, non-zero, recorded ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("q?",), {"AGENT_ROOM_CLAUDE": "/nonexistent/claude"}, "cannot run the client"),
        (("q?",), {"FAKE_CLAUDE_MODE": "exit"}, "exited with status 3: the model is overloaded"),
        (("q?",), {"FAKE_CLAUDE_MODE": "error"}, "reported an error (error_during_execution)"),
        (("",), {}, "the question is empty"),
    ],
)
def test_failures_are_one_line(
    fake: Fake, room_home: Path, args: tuple[str, ...], env: Mapping[str, str], message: str
) -> None:
    result = fake.ask(str(fake.repo), *args, "--quiet", **env)
    assert result.code != 0
    assert result.out == ""
    assert len(result.err.splitlines()) == 1, result.err
    assert message in result.err
    assert "Traceback" not in result.err
    assert len(_events(room_home, "intercom.failed")) == 1


def test_a_repo_that_is_not_a_directory(fake: Fake, room_home: Path) -> None:
    result = fake.ask(str(fake.repo / "missing"), "q?")
    assert result.code == 2
    assert result.err.strip().endswith("is not a directory, nor the name of someone in the room")
    assert len(result.err.splitlines()) == 1
    assert len(_events(room_home, "intercom.failed")) == 1


def test_a_timeout_ends_the_clients_process_group(fake: Fake, room_home: Path) -> None:
    started = time.monotonic()
    result = fake.ask(str(fake.repo), "q?", "--quiet", "--timeout", "1", FAKE_CLAUDE_MODE="sleep")
    assert time.monotonic() - started < 20
    assert result.code == 1
    assert result.err == "agent-room: the client took longer than 1 s and was ended\n"
    (run,) = fake.runs()
    wait_for(lambda: _gone(run["grandchild"]), timeout=5)  # the client's own child went too
    (failed,) = _events(room_home, "intercom.failed")
    assert "took longer" in failed["data"]["reason"]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# -- the sessions ----------------------------------------------------------------------


def test_intercom_lists_forgets_and_records_history(fake: Fake) -> None:
    first = json.loads(fake.ask(str(fake.repo), "auth tokens?", "--json").out)
    fake.ask(str(fake.repo), "also auth tokens?")
    text = fake.cli("intercom").out
    assert f"{fake.repo.resolve()} (@api): 1 session, $0.0200, 4 turns" in text
    assert '"auth tokens?"  2 asks' in text
    history = json.loads(fake.cli("history", "--json").out)
    assert [m["kind"] for m in history] == ["ask", "answer", "ask", "answer"]
    assert (history[0]["sender"], history[0]["recipient"]) == ("operator", "api")
    assert fake.cli("intercom", "forget", first["session_id"]).code == 0
    assert json.loads(fake.cli("intercom", "--json").out) == []
    assert fake.cli("intercom", "forget", "nothing-here").code == 1


V1 = {"/repos/backend": {"session_id": "abc-1", "updated_at": "2025-12-06T10:15:00Z"}}


def test_import_a_v1_state_file(fake: Fake, tmp_path: Path) -> None:
    state = tmp_path / "cross-agent-sessions.json"
    state.write_text(json.dumps(V1))
    result = fake.cli("intercom", "import", str(state))
    assert result.code == 0, result.err
    assert "imported 1 of 1 sessions" in result.err
    assert json.loads((tmp_path / "cross-agent-sessions.json.v1.backup").read_text()) == V1
    assert json.loads(state.read_text())["version"] == "2.0.0"
    (repo,) = json.loads(fake.cli("intercom", "--json").out)
    assert repo["sessions"][0]["session_id"] == "abc-1"
    assert repo["sessions"][0]["parent"] == "migrated-v1"
    # the seed's users resume it by id
    back = fake.ask(str(fake.repo), "q", "--resume", "abc-1", "--json")
    assert json.loads(back.out)["session_id"] == "abc-1"


def test_a_foreign_file_imports_nothing(fake: Fake, tmp_path: Path) -> None:
    text = json.dumps({"name": "pkg", "version": "1.0"})  # another program's, or a newer
    state = tmp_path / "state.json"
    state.write_text(text)
    result = fake.cli("intercom", "import", str(state))
    assert result.code == 2
    assert len(result.err.splitlines()) == 1
    assert "not a state file" in result.err
    assert state.read_text() == text
    assert not (tmp_path / "state.json.v1.backup").exists()
    assert json.loads(fake.cli("intercom", "--json").out) == []


@pytest.mark.parametrize("text", ["{broken", json.dumps({"repos": {"/r": {"sessions": 3}}})])
def test_a_corrupt_state_file_is_kept_aside_and_started_empty(
    fake: Fake, tmp_path: Path, text: str
) -> None:
    """Seed 000: a corrupt state file degrades gracefully into an empty state, and the
    corrupt one is kept as a backup."""
    state = tmp_path / "state.json"
    state.write_text(text)
    result = fake.cli("intercom", "import", str(state))
    assert result.code == 0, result.err
    assert f"[Intercom] {state} is corrupt (not a state file" in result.err
    assert "imported 0 of 0 sessions" in result.err
    assert (tmp_path / "state.json.corrupt.backup").read_text() == text
    assert json.loads(state.read_text())["repos"] == {}
    assert (state.stat().st_mode & 0o777) == 0o600
    assert fake.cli("intercom", "import", str(state)).code == 0  # the empty state reads


def test_an_ask_stopped_at_max_turns_keeps_its_session_and_cost(fake: Fake) -> None:
    """The client stopped at ``--max-turns`` returned a session and its cost: both are
    kept (the next ask resumes it), and the ask says why there is no answer."""
    stopped = fake.ask(str(fake.repo), "trace the auth flow", "--max-turns", "1",
                       FAKE_CLAUDE_MODE="max_turns")  # fmt: skip
    assert stopped.code == 1
    assert stopped.out == ""
    assert "[Intercom] Stopped at the turn limit (1) before an answer: session" in stopped.err
    assert "Traceback" not in stopped.err
    (repo,) = json.loads(fake.cli("intercom", "--json").out)
    (session,) = repo["sessions"]
    assert session["cost_usd"] == pytest.approx(0.01)
    again = json.loads(fake.ask(str(fake.repo), "trace the auth flow, go on", "--json").out)
    assert again["session_id"] == session["session_id"]  # resumed, not lost
    assert again["decision"] == "resume"
