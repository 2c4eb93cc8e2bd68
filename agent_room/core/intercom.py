"""The intercom's decision: resume an earlier headless conversation in a repository, or
start a new one (seed 000).

Resuming is cheap (the client's prompt cache) and coherent (one topic per conversation);
a new conversation keeps unrelated topics apart. The rule, with the seed's numbers:
resume a session of the same parent in the same repository, used within 15 minutes,
whose topic the question is related to (a continuation phrase, or keyword overlap, stop
words removed, above 0.30 with the topic or above 0.40 with the last message).

The seed checks only the most recent session; its own example ("follow up on auth"
after a database question resumes the auth session) needs every recent session of the
parent to be a candidate, so the best related one is chosen (highest overlap, then the
most recent); a continuation phrase alone picks the most recent. A session another ask
is using right now is never a candidate (two writers would interleave one transcript).

Pure: the store supplies the sessions, the caller the clock. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

RESUME_WINDOW = 15 * 60.0
"""Seconds since a session's last use within which it may be resumed."""
TOPIC_THRESHOLD = 0.30
"""Keyword overlap with a session's topic above which a question is related."""
RECENT_THRESHOLD = 0.40
"""Keyword overlap with a session's last message above which a question is related."""
DEFAULT_SESSION_LIMIT = 5
"""Sessions kept per repository; the oldest inactive ones go first."""
DEFAULT_MAX_TURNS = 10
"""Agentic turns an ask may take (``--max-turns``) unless the room's settings say otherwise."""
DEFAULT_TIMEOUT = 600.0
"""Seconds an ask may run before the client's whole process group is ended."""
OPERATOR_PARENT = "operator"
"""The parent of asks made by the operator at a terminal (no agent session asked)."""
TOPIC_CHARS = 50
PREVIEW_CHARS = 60

STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "to",
        "from",
        "in",
        "on",
        "at",
        "for",
        "with",
    ]
)
"""The seed's stop words, removed before keywords are compared."""
CONTINUATION_PHRASES = ("follow up", "also", "additionally", "regarding that", "about that")
"""A question with one of these continues the conversation it follows."""
_PHRASE = re.compile(
    r"\b(" + "|".join(p.replace(" ", r"[\s-]+") for p in CONTINUATION_PHRASES) + r")\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9_]+")


def keywords(text: str) -> frozenset[str]:
    """The question's words, lower case, stop words removed."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def overlap(reference: frozenset[str], question: frozenset[str]) -> float:
    """Share of ``reference``'s keywords the question has (the seed's ratio)."""
    return len(reference & question) / max(len(reference), 1)


def continuation(question: str) -> str | None:
    """The continuation phrase the question uses, if any."""
    found = _PHRASE.search(question)
    return " ".join(found.group(1).lower().replace("-", " ").split()) if found else None


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    return " ".join(text.split())[:limit]


def topic_of(question: str) -> str:
    """A new session's topic: the first 50 characters of its first question."""
    return one_line(question, TOPIC_CHARS)


def preview_of(question: str) -> str:
    """The last message preview kept for a session: its first 60 characters."""
    return one_line(question, PREVIEW_CHARS)


@dataclass(frozen=True, slots=True)
class IntercomSession:
    """One headless conversation in a repository, as the room keeps it."""

    session_id: str
    repo: str
    topic: str
    created_at: float
    last_used_at: float
    parent: str
    message_count: int = 1
    last_message: str = ""
    cost_usd: float = 0.0
    turns: int = 0
    busy: bool = False
    """Another ask is running in it now."""


@dataclass(frozen=True, slots=True)
class Relatedness:
    """How a question relates to one session."""

    related: bool
    topic_overlap: float
    recent_overlap: float
    phrase: str | None = None

    @property
    def score(self) -> float:
        """The better of the two overlaps: what ranks related sessions."""
        return max(self.topic_overlap, self.recent_overlap)

    def describe(self) -> str:
        """The seed's ``Topic check`` line."""
        verdict = "RELATED" if self.related else "UNRELATED"
        why = f"continuation phrase {self.phrase!r}, " if self.phrase else ""
        return (
            f"{verdict} ({why}keyword overlap: topic {self.topic_overlap:.0%},"
            f" last message {self.recent_overlap:.0%})"
        )


def relatedness(question: str, session: IntercomSession) -> Relatedness:
    """Whether ``question`` continues ``session``'s topic (seed 000, step 3)."""
    words = keywords(question)
    topic = overlap(keywords(session.topic), words)
    recent = overlap(keywords(session.last_message), words)
    phrase = continuation(question)
    related = phrase is not None or topic > TOPIC_THRESHOLD or recent > RECENT_THRESHOLD
    return Relatedness(related, topic, recent, phrase)


@dataclass(frozen=True, slots=True)
class Decision:
    """Resume ``session_id``, or start a new session (``session_id`` None)."""

    resume: str | None
    reason: str
    lines: tuple[str, ...]
    """The seed's ``[Intercom]`` lines explaining it."""
    relatedness: Relatedness | None = None

    @property
    def action(self) -> str:
        """``resume`` or ``new``."""
        return "resume" if self.resume else "new"


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes} min ago" if minutes else f"{int(seconds)} s ago"


def decide(
    sessions: Iterable[IntercomSession],
    *,
    repo: str,
    parent: str,
    question: str,
    now: float,
    window: float = RESUME_WINDOW,
    force_new: bool = False,
    resume_id: str | None = None,
) -> Decision:
    """Resume or new for one ask (seed 000, steps 2 and 3); see the module's rule."""
    mine = [s for s in sessions if s.repo == repo]
    lines = [f"[Intercom] Using parent session: {parent}", f"[Intercom] Analyzing {repo}"]
    ours = sorted(
        (s for s in mine if s.parent == parent), key=lambda s: s.last_used_at, reverse=True
    )
    lines += [
        f"  → Found {len(mine)} existing sessions",
        f"  → {len(ours)} active in current parent",
    ]

    def new(reason: str) -> Decision:
        lines.extend(["  → Decision: STARTING NEW SESSION", f'  → Topic: "{topic_of(question)}"'])
        return Decision(None, reason, tuple(lines))

    if resume_id is not None:
        lines.append(f"  → Decision: RESUMING session {resume_id} (--resume)")
        return Decision(resume_id, "asked for with --resume", tuple(lines))
    if force_new:
        return new("asked for with --new")
    recent = [s for s in ours if now - s.last_used_at <= window]
    if ours:
        latest = ours[0]
        lines.append(f'  → Most recent: "{latest.topic}" ({_ago(now - latest.last_used_at)})')
    if not recent:
        reason = "no session of this parent here" if not ours else "none used in the last 15 min"
        if ours:
            lines.append(f"  → Not used within {int(window // 60)} min")
        return new(reason)
    best: tuple[IntercomSession, Relatedness] | None = None
    busy: IntercomSession | None = None
    for session in recent:
        check = relatedness(question, session)
        if not check.related:
            continue
        if session.busy:
            busy = busy or session
            continue
        if best is None or check.score > best[1].score:
            best = (session, check)
    if best is None:
        if busy is not None:
            lines.append(f"  → Session {busy.session_id} is busy with another ask")
            return new(f"the related session {busy.session_id} is busy with another ask")
        lines.append(f"  → Topic check: {relatedness(question, recent[0]).describe()}")
        return new("not related to a recent session")
    session, check = best
    lines += [
        f"  → Topic check: {check.describe()}",
        f"  → Decision: RESUMING session {session.session_id}",
    ]
    reason = f'related to "{session.topic}" ({check.describe()})'
    return Decision(session.session_id, reason, tuple(lines), check)


@dataclass(frozen=True, slots=True)
class Cleanup:
    """Which sessions of a repository to forget, and the lines that say so."""

    remove: tuple[str, ...]
    lines: tuple[str, ...]


def cleanup(sessions: Sequence[IntercomSession], *, repo: str, parent: str, limit: int) -> Cleanup:
    """Seed 000, step 6: over the limit, drop the oldest sessions of other parents."""
    mine = [s for s in sessions if s.repo == repo]
    if len(mine) <= limit:
        return Cleanup((), ())
    active = [s for s in mine if s.parent == parent]
    inactive = sorted(
        (s for s in mine if s.parent != parent and not s.busy), key=lambda s: s.last_used_at
    )
    excess = len(mine) - limit
    gone = tuple(s.session_id for s in inactive[:excess])
    lines = (
        f"[Intercom] Session cleanup for {repo}",
        f"  → {len(mine)} sessions found (limit: {limit})",
        f"  → {len(active)} active (preserved)",
        f"  → Removed {len(gone)} oldest inactive session{'s' if len(gone) != 1 else ''}"
        f" ({', '.join(gone) or 'none'})",
        f"  → Kept {len(mine) - len(gone)} sessions",
    )
    return Cleanup(gone, lines)


def session_cost(stored: float, reported: float, *, resumed: bool) -> float:
    """The session's cost after an ask whose client reported ``total_cost_usd``.

    A resumed client reports the whole conversation's cost (checked with Claude Code
    2.1.330: 0.00014, then 0.00028 after a resume), so it replaces what is stored; a
    report below the stored total (a client that counts the run alone) is added to it.
    """
    if resumed and reported >= stored:
        return reported
    return stored + reported
