"""The intercom's decision, cleanup, cost and parsing, on the seed's own examples."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_room.core.intercom import (
    RESUME_WINDOW,
    IntercomSession,
    cleanup,
    continuation,
    decide,
    keywords,
    overlap,
    relatedness,
    session_cost,
    topic_of,
)
from agent_room.core.intercom_state import parse_answer, read_seed_state
from agent_room.turn.core.errors import BadInput

NOW = 1_800_000_000.0
BACKEND = "/repos/backend-api"
FRONTEND = "/repos/frontend"
PARENT = "parent-session-1"


def session(
    sid: str,
    topic: str,
    *,
    repo: str = BACKEND,
    parent: str = PARENT,
    ago: float = 60.0,
    last: str | None = None,
    busy: bool = False,
) -> IntercomSession:
    return IntercomSession(
        session_id=sid,
        repo=repo,
        topic=topic,
        created_at=NOW - ago - 10,
        last_used_at=NOW - ago,
        parent=parent,
        last_message=last if last is not None else topic,
        busy=busy,
    )


def ask(sessions: list[IntercomSession], question: str, repo: str = BACKEND, **kw: object):  # type: ignore[no-untyped-def]
    return decide(sessions, repo=repo, parent=PARENT, question=question, now=NOW, **kw)  # type: ignore[arg-type]


def test_the_seeds_example_flow() -> None:
    """auth -> new; database -> new; "follow up on auth" -> the auth session; frontend -> new."""
    first = ask([], "How do we handle auth tokens?")
    assert first.resume is None
    assert first.reason == "no session of this parent here"
    auth = session("abc-123", topic_of("How do we handle auth tokens?"), ago=120)

    second = ask([auth], "How are database migrations run?")
    assert second.resume is None
    database = session("abc-456", topic_of("How are database migrations run?"), ago=60)

    third = ask([auth, database], "Follow up on auth: where are tokens refreshed?")
    assert third.resume == "abc-123"
    assert "Decision: RESUMING session abc-123" in third.lines[-1]

    fourth = ask([auth, database], "How is component state managed?", repo=FRONTEND)
    assert fourth.resume is None
    assert "Found 0 existing sessions" in "\n".join(fourth.lines)


def test_the_overlap_figures() -> None:
    """Stop words removed; the ratio is over the reference's keywords; > 0.30 and > 0.40."""
    assert keywords("The token and the refresh for a user") == {"token", "refresh", "user"}
    assert overlap(frozenset({"auth", "token", "flow"}), frozenset({"auth"})) == pytest.approx(
        1 / 3
    )
    topic = session("s", "auth token refresh", last="unrelated words here now")
    check = relatedness("what about the token refresh", topic)
    assert check.related
    assert check.topic_overlap == pytest.approx(2 / 3)
    # exactly 0.30 is not above the threshold: 3 of 10 topic words
    ten = session("s", "a0 a1 a2 a3 a4 a5 a6 a7 a8 a9", last="zz")
    assert not relatedness("a0 a1 a2", ten).related
    assert relatedness("a0 a1 a2 a3", ten).related
    # the last message: 2 of 5 is 0.40, not above; 3 of 5 is
    five = session("s", "zz", last="b0 b1 b2 b3 b4")
    assert not relatedness("b0 b1", five).related
    assert relatedness("b0 b1 b2", five).related


@pytest.mark.parametrize(
    ("question", "phrase"),
    [
        ("Follow up: where?", "follow up"),
        ("follow-up on that", "follow up"),
        ("Also, which table?", "also"),
        ("Additionally the cache", "additionally"),
        ("Regarding that endpoint", "regarding that"),
        ("And about that header", "about that"),
        ("falsehood of the claim", None),
    ],
)
def test_continuation_phrases(question: str, phrase: str | None) -> None:
    assert continuation(question) == phrase


def test_resume_needs_the_window_the_parent_and_a_free_session() -> None:
    related = "Follow up on the auth tokens"
    old = session("old", "auth tokens", ago=RESUME_WINDOW + 1)
    assert ask([old], related).resume is None
    other = session("other", "auth tokens", parent="someone-else")
    assert ask([other], related).resume is None
    busy = session("busy", "auth tokens", busy=True)
    decision = ask([busy], related)
    assert decision.resume is None
    assert "busy" in decision.reason
    assert ask([session("ok", "auth tokens", ago=RESUME_WINDOW)], related).resume == "ok"


def test_overrides() -> None:
    recent = session("abc", "auth tokens")
    assert ask([recent], "auth tokens again", force_new=True).resume is None
    assert ask([], "anything", resume_id="given").resume == "given"


def test_cleanup_the_seeds_example() -> None:
    """6 sessions, limit 5, 2 active: the oldest inactive one goes."""
    sessions = [
        session("active-1", "a", ago=500),
        session("active-2", "b", ago=10),
        *(session(f"old-{i}", "c", parent="gone", ago=1000 * (i + 1)) for i in range(4)),
    ]
    plan = cleanup(sessions, repo=BACKEND, parent=PARENT, limit=5)
    assert plan.remove == ("old-3",)
    assert "6 sessions found (limit: 5)" in plan.lines[1]
    assert "2 active (preserved)" in plan.lines[2]
    assert "Kept 5 sessions" in plan.lines[-1]
    assert cleanup(sessions[:5], repo=BACKEND, parent=PARENT, limit=5).remove == ()


def test_cleanup_never_removes_the_current_parents_sessions() -> None:
    sessions = [session(f"mine-{i}", "t", ago=i) for i in range(7)]
    assert cleanup(sessions, repo=BACKEND, parent=PARENT, limit=5).remove == ()


def test_session_cost_follows_the_clients_running_total() -> None:
    assert session_cost(0.0, 0.065, resumed=False) == pytest.approx(0.065)
    assert session_cost(0.065, 0.070, resumed=True) == pytest.approx(0.070)
    assert session_cost(0.065, 0.005, resumed=True) == pytest.approx(0.070)


def test_answer_as_object_or_array() -> None:
    result = {
        "type": "result",
        "session_id": "s1",
        "result": "hi",
        "total_cost_usd": 0.5,
        "num_turns": 3,
        "is_error": False,
        "subtype": "success",
    }
    one = parse_answer(json.dumps(result))
    events = parse_answer(json.dumps([{"type": "system", "session_id": "s1"}, result]))
    assert one == events
    assert (one.session_id, one.result, one.cost_usd, one.turns) == ("s1", "hi", 0.5, 3)
    for bad in ("not json", "[]", '{"result": "no id"}', ""):
        with pytest.raises(BadInput):
            parse_answer(bad)


V1 = {"/repos/backend": {"session_id": "x-1", "updated_at": "2025-12-06T10:15:00Z"}}


def test_v1_migrates_as_the_seed_says() -> None:
    state = read_seed_state(json.dumps(V1), now=NOW)
    assert state.migrated is not None
    (entry,) = state.migrated["repos"]["/repos/backend"]["sessions"]
    assert entry == {
        "session_id": "x-1",
        "topic_summary": "Migrated from v1",
        "created_at": "2025-12-06T10:15:00Z",
        "last_used_at": "2025-12-06T10:15:00Z",
        "parent_session_id": "migrated-v1",
        "message_count": 1,
        "last_message_preview": "",
        "cost_usd": 0.0,
        "status": "inactive",
    }
    assert state.migrated["version"] == "2.0.0"
    (imported,) = state.sessions
    assert imported.parent == "migrated-v1"
    assert imported.last_used_at == 1765016100.0


def test_v2_is_read_and_foreign_files_are_refused() -> None:
    v2 = read_seed_state(json.dumps(read_seed_state(json.dumps(V1), now=NOW).migrated), now=NOW)
    assert v2.migrated is None
    assert [s.session_id for s in v2.sessions] == ["x-1"]
    for text, reason in (
        ("{oops", "corrupt"),
        ("[1, 2]", "not an object"),
        ('{"version": "9.0"}', "version"),
        ('{"version": "2.0.0"}', "'repos'"),
        ('{"name": "my-package", "dependencies": {}}', "neither v2 nor a v1"),
        (
            '{"version": "2.0.0", "repos": {"/r": {"sessions": [{"session_id": "a",'
            ' "last_used_at": "yesterday"}]}}}',
            "ISO-8601",
        ),
    ):
        with pytest.raises(BadInput, match=reason):
            read_seed_state(text, now=NOW)


ids = st.sampled_from(["s1", "s2", "s3", "s4"])
parents = st.sampled_from([PARENT, "other"])
repos = st.sampled_from([BACKEND, FRONTEND])
words = st.lists(st.sampled_from(["auth", "token", "database", "also", "the", "css"]), max_size=6)
sessions_strategy = st.lists(
    st.builds(
        session,
        ids,
        words.map(" ".join),
        repo=repos,
        parent=parents,
        ago=st.floats(0, 3 * RESUME_WINDOW),
        last=words.map(" ".join),
        busy=st.booleans(),
    ),
    max_size=6,
    unique_by=lambda s: s.session_id,
)


near_strategy = st.lists(
    st.builds(
        session,
        st.sampled_from(["n1", "n2", "n3"]),
        words.map(" ".join),
        repo=repos,
        ago=st.floats(0, RESUME_WINDOW),
        last=words.map(" ".join),
        busy=st.booleans(),
    ),
    max_size=3,
    unique_by=lambda s: s.session_id,
)
"""Sessions of this parent used within the window: without them a resume is drawn in
about one example of fifty, and the checks of the one resumed would hardly ever run."""
AUTH = session("n1", "auth token", last="auth token")


@given(sessions_strategy, near_strategy, words.map(" ".join), repos, st.booleans())
@example([], [AUTH], "auth token", BACKEND, False)  # the resume's checks run every time
@example([session("s1", "auth token", busy=True)], [AUTH], "auth token", BACKEND, False)
def test_a_resumed_session_always_qualifies(
    stored: list[IntercomSession],
    near: list[IntercomSession],
    question: str,
    repo: str,
    force_new: bool,
) -> None:
    """Whatever is stored: a resume is of this parent, this repository, used within the
    window, not busy and related; --new never resumes."""
    sessions = stored + near
    decision = ask(sessions, question, repo=repo, force_new=force_new)
    assert decision.lines[0] == f"[Intercom] Using parent session: {PARENT}"
    if force_new:
        assert decision.resume is None
    for chosen in (s for s in sessions if s.session_id == decision.resume):
        assert chosen.repo == repo
        assert chosen.parent == PARENT
        assert not chosen.busy
        assert NOW - chosen.last_used_at <= RESUME_WINDOW
        assert relatedness(question, chosen).related
    assert decision.resume in (None, *(s.session_id for s in sessions))


@given(sessions_strategy, words.map(" ".join), repos)
def test_a_related_free_recent_session_is_always_resumed(
    sessions: list[IntercomSession], question: str, repo: str
) -> None:
    """The converse: if any session qualifies, the decision resumes one."""
    qualifies = [
        s
        for s in sessions
        if s.repo == repo
        and s.parent == PARENT
        and not s.busy
        and NOW - s.last_used_at <= RESUME_WINDOW
        and relatedness(question, s).related
    ]
    assert (ask(sessions, question, repo=repo).resume is not None) == bool(qualifies)


@given(
    st.lists(
        st.builds(session, ids, st.just("t"), parent=parents, ago=st.floats(0, 1e5)),
        max_size=10,
        unique_by=lambda s: s.session_id,
    ),
    st.integers(1, 6),
)
def test_cleanup_keeps_the_limit_when_it_can(sessions: list[IntercomSession], limit: int) -> None:
    plan = cleanup(sessions, repo=BACKEND, parent=PARENT, limit=limit)
    removed = set(plan.remove)
    assert all(s.parent != PARENT for s in sessions if s.session_id in removed)
    kept = [s for s in sessions if s.session_id not in removed]
    inactive_left = [s for s in kept if s.parent != PARENT]
    assert len(kept) <= limit or not inactive_left
    if removed:  # the oldest inactive ones went
        newest_gone = max(s.last_used_at for s in sessions if s.session_id in removed)
        assert all(s.last_used_at >= newest_gone for s in inactive_left)
