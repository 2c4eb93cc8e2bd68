"""``agent-room ask`` with the pinned Claude Code in print mode (``claude -p
--output-format json``) against the model stand-in: sessions created, resumed and kept
apart by the seed's rules, the answer captured by ``$(...)``, cost from the client's JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_room.demo.model_api import ModelApi, Reply, Script
from agent_room.room.service import Room
from tests.real.conftest import API_KEY, claude_binary
from tests.real.model import Conversations, everything

FIRST = "How does the API refresh auth tokens?"
FOLLOW_UP = "Follow up: where is the token refresh endpoint defined?"
UNRELATED = "Which CSS framework does the frontend use?"


class Asker:
    """Runs ``agent-room ask`` as an agent's shell would, with an isolated HOME."""

    def __init__(self, tmp: Path, api: ModelApi, room_home: Path) -> None:
        self.api = api
        self.room_home = room_home
        self.repo = tmp / "api"
        self.repo.mkdir()
        home = tmp / "home"
        home.mkdir()
        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                    "projects": {str(self.repo.resolve()): {"hasTrustDialogAccepted": True}},
                    "fullscreenUpsellSeenCount": 99,
                    "hasSeenAutoDefaultNotice": True,
                }
            )
        )
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX", "AGENT_ROOM_"))
        }
        self.env = {
            **inherited,
            "HOME": str(home),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "AGENT_ROOM_HOME": str(room_home),
            "AGENT_ROOM_CLAUDE": str(claude_binary()),
        }

    def ask(self, question: str, *extra: str, **env: str) -> dict[str, Any]:
        """One ask with ``--json``; its record."""
        proc = subprocess.run(
            [sys.executable, "-m", "agent_room", "ask", str(self.repo), question, "--json", *extra],
            env={**self.env, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        record: dict[str, Any] = json.loads(proc.stdout)
        return record

    def bodies_with(self, text: str) -> list[dict[str, Any]]:
        """The model requests whose conversation includes ``text``."""
        return [b for b in Conversations(self.api).bodies() if text in everything(b)]


@pytest.fixture
def asker(tmp_path: Path, model_api: ModelApi, script: Script, room_home: Path) -> Asker:
    script.add("refresh auth tokens", Reply("Through POST /auth/refresh with the cookie."))
    script.add("token refresh endpoint", Reply("In api/routes/auth.py."))
    script.add("CSS framework", Reply("Tailwind."))
    return Asker(tmp_path, model_api, room_home)


def test_sessions_are_created_resumed_and_kept_apart(asker: Asker) -> None:
    first = asker.ask(FIRST)
    assert first["decision"] == "new"
    assert first["result"] == "Through POST /auth/refresh with the cookie."
    assert first["cost_usd"] > 0

    again = asker.ask(FOLLOW_UP)
    assert again["decision"] == "resume"
    assert again["session_id"] == first["session_id"]
    assert again["result"] == "In api/routes/auth.py."
    # the resumed conversation carried the first question to the model
    (resumed,) = [b for b in asker.bodies_with(FOLLOW_UP) if FIRST in everything(b)]
    assert resumed["messages"]
    # cost accumulates: the client reports the session's running total on a resume
    # each ask's cost is rounded to the micro-dollar; the total is not
    assert again["session_cost_usd"] == pytest.approx(
        first["cost_usd"] + again["cost_usd"], abs=2e-6
    )
    assert again["session_cost_usd"] > first["session_cost_usd"]
    # the usage keeps each ask's share of the running total, for the asker, per repository
    shown = subprocess.run(
        [sys.executable, "-m", "agent_room", "usage", "--by", "ask", "--json"],
        env=asker.env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    (per_repo,) = json.loads(shown.stdout)["lines"]
    assert per_repo["requests"] >= 2
    assert per_repo["output_tokens"] > 0
    assert per_repo["cost_usd"] == pytest.approx(again["session_cost_usd"], abs=2e-6)

    other = asker.ask(UNRELATED)
    assert other["decision"] == "new"
    assert other["session_id"] != first["session_id"]
    assert all(FIRST not in everything(b) for b in asker.bodies_with(UNRELATED))

    room = Room.open({"AGENT_ROOM_HOME": str(asker.room_home)})
    try:
        from agent_room.room.intercom import Intercom
        from agent_room.room.intercom_sessions import listing

        (repo,) = listing(Intercom(room))
        by_id = {s["session_id"]: s for s in repo["sessions"]}
        assert by_id[first["session_id"]]["message_count"] == 2
        assert repo["cost_usd"] == pytest.approx(
            again["session_cost_usd"] + other["session_cost_usd"], abs=2e-6
        )  # each ask's share is kept to the micro-dollar
        kinds = [m["kind"] for m in room.history(10)]
        assert kinds == ["ask", "answer"] * 3
    finally:
        room.close()


def test_the_asked_session_joins_the_room_under_its_asker(asker: Asker) -> None:
    """The plugin is loaded: the client's hooks register it, under the asking session."""
    room = Room.open({"AGENT_ROOM_HOME": str(asker.room_home)})
    try:
        room.store.register(
            {"session_id": "asker-session", "cwd": str(asker.repo.parent), "state": "idle"},
            wanted="web",
            explicit=True,
            at=0.0,
            alive=lambda *_a: True,
        )
    finally:
        room.close()
    record = asker.ask(FIRST, CLAUDE_CODE_SESSION_ID="asker-session")
    assert record["asker"] == "web"
    # the room's SessionStart context reached the asked agent's model
    assert asker.bodies_with("You are @ask-api in the agent room")
    room = Room.open({"AGENT_ROOM_HOME": str(asker.room_home)})
    try:
        row = room.store.session(record["session_id"])
        assert row is not None
        assert row["name"] == "ask-api"
        assert row["parent"] == "asker-session"
    finally:
        room.close()


def test_captured_by_command_substitution(asker: Asker) -> None:
    """The seed's hang: ``answer=$(...)`` with the shell's stdin an open pipe."""
    reader, writer = os.pipe()
    try:
        proc = subprocess.Popen(
            ["bash", "-c", 'answer=$(agent-room ask "$REPO" "$Q" 2>/dev/null); echo "[$answer]"'],
            stdin=reader,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**asker.env, "REPO": str(asker.repo), "Q": FIRST},
            text=True,
        )
        os.close(reader)
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(writer)
    assert proc.returncode == 0, err
    assert out == "[Through POST /auth/refresh with the cookie.]\n"
