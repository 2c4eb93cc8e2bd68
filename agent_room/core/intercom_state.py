"""What the intercom reads from outside: the client's JSON answer, and the seed's state file.

``claude -p --output-format json`` prints one result object, or (with verbose settings)
an array of events whose ``result`` event carries the same fields: both are accepted.
The seed kept its sessions in a JSON state file (v2, or v1 migrated to v2 with the
seed's exact values); ``agent-room intercom import`` reads it so that the seed's users
keep their conversations. Anything else is refused with the reason, before anything is
imported. Pure: the callers read and write the files. Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_room.core.intercom import IntercomSession
from agent_room.turn.core.errors import BadInput

V2 = "2.0.0"
MIGRATED_PARENT = "migrated-v1"
MIGRATED_TOPIC = "Migrated from v1"


@dataclass(frozen=True, slots=True)
class ClientAnswer:
    """The fields of the client's result the room keeps."""

    session_id: str
    result: str
    cost_usd: float
    turns: int
    is_error: bool
    subtype: str
    duration_ms: int
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    """The whole result object: its ``usage`` and ``modelUsage`` are the run's tokens."""


def parse_answer(text: str) -> ClientAnswer:
    """The result in the client's stdout (an object, or an array of events)."""
    try:
        data = json.loads(text)
    except ValueError:
        first = text.strip().splitlines()[0][:120] if text.strip() else "nothing"
        raise BadInput(f"the client did not print JSON (it printed: {first})") from None
    if isinstance(data, list):
        results = [e for e in data if isinstance(e, dict) and e.get("type") == "result"]
        data = results[-1] if results else None
    if not isinstance(data, dict) or not isinstance(data.get("session_id"), str):
        raise BadInput("the client's JSON holds no result with a session_id")
    return ClientAnswer(
        session_id=data["session_id"],
        result=str(data.get("result") or ""),
        cost_usd=_number(data.get("total_cost_usd")),
        turns=int(_number(data.get("num_turns"))),
        is_error=bool(data.get("is_error")),
        subtype=str(data.get("subtype") or ""),
        duration_ms=int(_number(data.get("duration_ms"))),
        data=data,
    )


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


# -- the seed's state file ----------------------------------------------------------------


class CorruptState(BadInput):
    """The file is not a state file: bad JSON or a broken structure (not a newer version,
    which is refused as it is). The seed degrades gracefully: a backup, then empty state."""


def empty_state() -> dict[str, Any]:
    """A v2 state file with no sessions: what a corrupt one is replaced by."""
    return migrate_v1({}, now=0.0)


@dataclass(frozen=True, slots=True)
class SeedState:
    """The sessions of a seed state file, and its v2 form when it was v1."""

    sessions: tuple[IntercomSession, ...]
    migrated: dict[str, Any] | None = None
    """The v2 document to write back (a v1 file was read); None for a v2 file."""


def read_seed_state(text: str, *, now: float) -> SeedState:
    """Parse a seed state file; ``BadInput`` with the reason if it is not one."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CorruptState(f"not a state file: the JSON is corrupt ({exc})") from None
    except RecursionError:  # past a bound, like a file too large: refused, not replaced
        raise BadInput("not a state file: the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise CorruptState("not a state file: the top level is not an object")
    if "version" in data:
        if not str(data["version"]).startswith("2."):
            raise BadInput(f"not a state file this reads: version {data['version']!r}")
        return SeedState(_v2_sessions(data))
    migrated = migrate_v1(data, now=now)
    return SeedState(_v2_sessions(migrated), migrated)


def migrate_v1(data: dict[str, Any], *, now: float) -> dict[str, Any]:
    """The seed's v1 -> v2 migration: each repository's one session becomes inactive."""
    repos: dict[str, Any] = {}
    for repo, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("session_id"), str):
            raise CorruptState(f"not a state file: {repo!r} is neither v2 nor a v1 entry")
        stamp = entry.get("updated_at") or _iso(now)
        session = {
            "session_id": entry["session_id"],
            "topic_summary": MIGRATED_TOPIC,
            "created_at": stamp,
            "last_used_at": stamp,
            "parent_session_id": MIGRATED_PARENT,
            "message_count": 1,
            "last_message_preview": "",
            "cost_usd": 0.0,
            "status": "inactive",
        }
        repos[repo] = {"sessions": [session], "session_limit": 5}
    return {
        "version": V2,
        "repos": repos,
        "current_parent_session": None,
        "config": {"default_session_limit": 5, "auto_cleanup_enabled": True},
    }


def _v2_sessions(data: dict[str, Any]) -> tuple[IntercomSession, ...]:
    repos = data.get("repos")
    if not isinstance(repos, dict):
        raise CorruptState("not a state file: no 'repos' object")
    found: list[IntercomSession] = []
    for repo, entry in repos.items():
        listed = entry.get("sessions") if isinstance(entry, dict) else None
        if not isinstance(listed, list):
            raise CorruptState(f"not a state file: {repo!r} has no 'sessions' list")
        for item in listed:
            if not isinstance(item, dict) or not isinstance(item.get("session_id"), str):
                raise CorruptState(f"not a state file: a session of {repo!r} has no session_id")
            last = _time(item.get("last_used_at"), repo)
            found.append(
                IntercomSession(
                    session_id=item["session_id"],
                    repo=str(repo),
                    topic=str(item.get("topic_summary") or ""),
                    created_at=_time(item.get("created_at"), repo)
                    if item.get("created_at")
                    else last,
                    last_used_at=last,
                    parent=str(item.get("parent_session_id") or MIGRATED_PARENT),
                    message_count=int(_number(item.get("message_count"))),
                    last_message=str(item.get("last_message_preview") or ""),
                    cost_usd=_number(item.get("cost_usd")),
                )
            )
    return tuple(found)


def _time(value: object, repo: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    try:
        stamp = datetime.fromisoformat(str(value))
    except ValueError:
        raise CorruptState(
            f"not a state file: a time of {repo!r} is not ISO-8601: {value!r}"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
