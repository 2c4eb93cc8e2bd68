"""Reading the model stand-in's request log: what each agent's model was shown.

The client sends the whole conversation on every turn, so "what the model was shown"
is the latest user message of each request; the agent a request belongs to is told by
the room's SessionStart context ("You are @NAME"), which opens every conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_room.demo.model_api import ModelApi, latest_user


def everything(body: Mapping[str, Any]) -> str:
    """All the text of a request (system prompt and messages)."""
    return json.dumps(body, ensure_ascii=False)


class Conversations:
    """Views of one stand-in's request log."""

    def __init__(self, api: ModelApi) -> None:
        self.api = api

    def bodies(self, agent: str | None = None) -> list[dict[str, Any]]:
        """The JSON bodies of model requests, those of @agent's conversation if given."""
        found = [r.body for r in list(self.api.requests) if isinstance(r.body, dict)]
        found = [b for b in found if b.get("messages")]
        if agent is None:
            return found
        mark = f"You are @{agent} in the agent room"
        return [b for b in found if mark in everything(b)]

    def shown(self, agent: str) -> list[str]:
        """The latest user message of each request of @agent's conversation."""
        return [latest_user(b)[0] for b in self.bodies(agent)]

    def turns_showing(self, agent: str, text: str) -> int:
        """How many of @agent's model requests had ``text`` in their latest user message."""
        return sum(1 for shown in self.shown(agent) if text in shown)
