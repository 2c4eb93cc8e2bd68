"""Renaming a session (what follows it, what stays) and peeking at a peer's transcript
(who may), on a real SQLite room with real transcripts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_room.core.enums import SessionState
from agent_room.room.links import Links
from agent_room.room.peek import peek
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput, NotFound, Refused, UnknownName
from tests.conftest import FIXTURES
from tests.room.conftest import register

SHORT = FIXTURES / "transcripts" / "spotter_short.jsonl"


# -- rename ---------------------------------------------------------------------------


def test_a_rename_takes_the_waiting_messages_along(linked: Room) -> None:
    linked.send("a", "b", "read before the rename")
    linked.inbox("b")
    linked.send("a", "b", "still unread")
    linked.send("b", "a", "said by b")
    handover = linked.send_handover("c", "b", body="take this")
    row = linked.rename("b", "bee")
    assert row["name"] == "bee"
    assert row["session_id"] == "s-b"
    assert row["moved"] == 2
    assert linked.store.holder("b") is None
    # unread and held messages wait for the session, under its new name
    assert [m["body"] for m in linked.inbox("bee")] == ["still unread"]
    assert linked.store.message(handover)["recipient"] == "bee"  # type: ignore[index]
    # what was said and read stays as it was said
    history = {m["body"]: (m["sender"], m["recipient"]) for m in linked.history(10)}
    assert history["read before the rename"] == ("a", "b")
    assert history["said by b"] == ("b", "a")
    events = [e for e in linked.store.events() if e["kind"] == "session.renamed"]
    assert len(events) == 1


def test_the_old_name_points_to_the_new_one(linked: Room) -> None:
    linked.rename("b", "bee")
    with pytest.raises(UnknownName, match="@b was renamed: it is @bee now"):
        linked.send("a", "b", "hello")
    # an agent launched as b keeps AGENT_ROOM_NAME=b: it is still itself
    assert linked.identify(env_name="b", pane=None, as_name=None) == "bee"
    linked.rename("bee", "bumble")
    assert linked.identify(env_name="b", pane=None, as_name=None) == "bumble"
    me = linked.identify(env_name="b", pane=None, as_name=None)
    assert linked.send(me, "a", "from the renamed") > 0
    assert linked.history(1)[0]["sender"] == "bumble"


def test_links_and_timers_follow_a_renamed_session(linked: Room) -> None:
    links = Links(linked)
    link, _reused, _id = links.open("a", "b", "let us talk")
    links.set_timer("b", "anchor", "5m", "back to the parser")
    linked.rename("b", "bee")
    (live,) = links.links(live_only=True)
    assert (live["initiator"], live["responder"]) == ("a", "bee")
    assert [t["name"] for t in links.timers()] == ["bee"]
    assert link["id"] == live["id"]


def test_a_rename_is_refused_clearly(linked: Room) -> None:
    with pytest.raises(Refused, match="@c is taken"):
        linked.rename("b", "c")
    with pytest.raises(UnknownName, match="nobody named @zed"):
        linked.rename("zed", "zz")
    with pytest.raises(BadInput):
        linked.rename("b", "Not A Name")
    with pytest.raises(BadInput, match="already named"):
        linked.rename("b", "b")
    assert linked.store.holder("b") is not None


def test_joining_a_pane_that_holds_a_session_renames_it(linked: Room) -> None:
    register(linked, "d", pane="%5")
    linked.send("a", "d", "waiting for d")
    row = linked.join("delta", pane="%5")
    assert row["renamed_from"] == "d"
    assert row["session_id"] == "s-d"
    names = linked.store.member_names()
    assert "delta" in names
    assert "d" not in names
    assert len([m for m in linked.store.members() if m["pane"] == "%5"]) == 1
    assert [m["body"] for m in linked.inbox("delta")] == ["waiting for d"]
    # the same name again is a refresh, not a rename
    assert "renamed_from" not in linked.join("delta", pane="%5")


def test_joining_a_pane_whose_session_ended_adds_the_name(linked: Room) -> None:
    register(linked, "d", pane="%5")
    linked.store.set_state("s-d", "ended", at=linked.clock())
    row = linked.join("echo", pane="%5")
    assert "renamed_from" not in row
    assert {"d", "echo"} <= set(linked.store.member_names())


# -- peek -----------------------------------------------------------------------------


@pytest.fixture
def transcript(linked: Room, tmp_path: Path) -> Path:
    path = tmp_path / "s-b.jsonl"
    shutil.copy(SHORT, path)
    register(linked, "b", transcript_path=str(path))
    return path


def test_the_operator_peeks_at_anyone(linked: Room, transcript: Path) -> None:
    seen = peek(linked, "@b", viewer=None, turns=3)
    assert seen.transcript_path == str(transcript)
    (turn,) = seen.tail.turns
    assert turn.prompt == "mix phx.server doesnt seem to start"


def test_an_agent_peeks_only_at_linked_peers(linked: Room, transcript: Path) -> None:
    with pytest.raises(Refused, match="@a has no open link to @b"):
        peek(linked, "b", viewer="a", turns=1)
    Links(linked).open("a", "b", "let us talk")
    assert peek(linked, "b", viewer="a", turns=1).tail.turns
    with pytest.raises(NotFound, match="@a's client has not told"):  # allowed: no file
        peek(linked, "a", viewer="b", turns=1)
    with pytest.raises(Refused, match="@c has no open link to @b"):
        peek(linked, "b", viewer="c", turns=1)
    assert transcript.exists()


def test_a_peek_without_a_transcript_says_why(linked: Room, tmp_path: Path) -> None:
    linked.join("hand")
    with pytest.raises(NotFound, match="@hand has no transcript"):
        peek(linked, "hand", viewer=None, turns=1)
    register(linked, "b", transcript_path=str(tmp_path / "gone.jsonl"))
    with pytest.raises(NotFound, match="does not exist"):
        peek(linked, "b", viewer=None, turns=1)
    with pytest.raises(UnknownName):
        peek(linked, "nobody", viewer=None, turns=1)


def test_a_new_session_of_a_renamed_agent_keeps_the_new_name(linked: Room) -> None:
    """/clear starts a new session in the same process, whose environment still says the
    name the agent was launched with: it continues under the name it was given since."""
    from agent_room.turn.room.registry import Registry, SessionFacts

    class Alive:
        def is_alive(self, pid: int, start_ticks: int | None) -> bool:
            return True

    registry = Registry(linked, Alive())
    registry.register(SessionFacts(session_id="s-one", name="worker", pid=7, pid_start=1))
    linked.rename("worker", "parser")
    registry.set_state("s-one", SessionState.ENDED)  # its SessionEnd (reason: clear)
    row = registry.register(SessionFacts(session_id="s-two", name="worker", pid=7, pid_start=1))
    assert row["name"] == "parser"
    assert linked.store.holder("worker") is None
