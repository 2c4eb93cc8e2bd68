"""``agent-room ask`` and ``agent-room intercom``: questions to headless agents in other
repositories, and the sessions the room keeps for them.

The answer goes to stdout and nothing else does, so ``answer=$(agent-room ask ...)``
holds just the answer; the reasoning (the seed's ``[Intercom]`` lines) goes to stderr.
The real client is built here and passed to the use case.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import click

from agent_room.adapters.claude import ClaudeHeadless
from agent_room.adapters.codex import CodexHeadless
from agent_room.cli.launcher import LEAKED, agent_env
from agent_room.cli.messages import read_body
from agent_room.cli.output import print_json
from agent_room.cli.params import COUNT, TIMEOUT, Group, json_option, own
from agent_room.config.settings import RoomSettings
from agent_room.core.intercom import OPERATOR_PARENT
from agent_room.core.intercom_state import CorruptState, SeedState, empty_state, read_seed_state
from agent_room.core.ports import HeadlessClient
from agent_room.plugin import claude_flags
from agent_room.room.clients import client_launch
from agent_room.room.intercom import Asker, Intercom
from agent_room.room.intercom_sessions import forget, import_sessions, listing
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.files import read_regular
from agent_room.turn.core.names import MAX_NAME_LENGTH, is_valid_name
from agent_room.turn.core.printable import printable

IMPORT_LIMIT = 8 * 1024 * 1024
"""Bytes of a state file ``intercom import`` reads at most (the seed's are a few KiB)."""
QUESTION_LIMIT = 256 * 1024
"""Bytes of a question read from a file or stdin."""
HIDDEN: tuple[str, ...] = ("TMUX", "TMUX_PANE", "AGENT_ROOM_NAME")
"""The asker's own variables: the client's hooks would register it as the asker."""


def _say(line: str) -> None:
    print(printable(line), file=sys.stderr, flush=True)


def client_env(
    label: str, asker: Asker, environ: dict[str, str], kind: str = "claude"
) -> dict[str, str]:
    """The client's environment: the asker's, without what identifies the asker, plus the
    room's variables, so that its hooks register it as ``@ask-LABEL`` under the asker."""
    name = f"ask-{label}"[:MAX_NAME_LENGTH].rstrip("-_")
    env = {k: v for k, v in environ.items() if k not in LEAKED and k not in HIDDEN}
    env.update(agent_env(name, kind, environ))
    env.pop("AGENT_ROOM_PARENT", None)
    if asker.parent != OPERATOR_PARENT:
        env["AGENT_ROOM_PARENT"] = asker.parent
    return env


def _kind(room: Room, repo: str) -> str:
    """The client to ask: Codex where REPO names a member that runs Codex, else Claude."""
    name = repo.removeprefix("@")
    row = room.store.holder(name) if is_valid_name(name) else None
    return "codex" if row is not None and row["agent"] == "codex" else "claude"


@dataclass(frozen=True)
class HeadlessClients:
    """Builds the client an ask of a repository runs (``ask``'s, and the MCP ``ask``
    tool's in the watch that serves it), with the programs the settings name."""

    settings: RoomSettings

    def __call__(self, room: Room, repo: str, label: str, asker: Asker) -> HeadlessClient:
        kind = _kind(room, repo)
        wanted = self.settings.program(kind) or kind
        binary = shutil.which(wanted) or wanted
        if kind == "codex":
            env = client_env(label, asker, dict(os.environ), kind)
            args, _ = client_launch(
                kind, name=env["AGENT_ROOM_NAME"], cwd=".", home=room.home, environ=env, tui=False
            )
            return CodexHeadless(binary, args=args, env=env)
        env = client_env(label, asker, dict(os.environ))
        return ClaudeHeadless(binary, args=claude_flags(), env=env)


def cmd_ask(
    *,
    repo: str,
    question: Sequence[str],
    file: str | None,
    new: bool,
    resume: str | None,
    max_turns: int | None,
    timeout: float,
    as_json: bool,
    quiet: bool,
) -> int:
    settings = RoomSettings.load(os.environ)
    room = Room.open(os.environ)
    intercom = Intercom(room)
    asker = intercom.asker(os.environ)
    if new and resume:
        raise BadInput("--new and --resume ID cannot go together")
    text = read_body(question, file, QUESTION_LIMIT) or ""
    try:
        _repo, label = intercom.repository(repo)
    except BadInput:
        label = "repo"  # the use case reports the bad REPO, and records it
    intercom.client = HeadlessClients(settings)(room, repo, label, asker)
    record = intercom.ask(
        repo,
        text,
        asker,
        max_turns=max_turns,
        timeout=timeout,
        force_new=new,
        resume_id=resume,
        say=(lambda _line: None) if quiet else _say,
    )
    stopped = bool(record.get("stopped"))  # at --max-turns: the session kept, no answer
    if as_json:
        print_json(record)
    elif record["result"] or not stopped:
        result = str(record["result"])
        if sys.stdout.isatty():  # captured, the answer is kept exactly as given
            result = printable(result, multiline=True)
        sys.stdout.write(result if result.endswith("\n") else result + "\n")
    return 1 if stopped else 0  # no answer yet: a script must not take it for one


def cmd_intercom(*, as_json: bool) -> int:
    repos = listing(Intercom(Room.open(os.environ)))
    if as_json:
        print_json(repos)
        return 0
    if not repos:
        print("no intercom sessions (ask with: agent-room ask REPO QUESTION)", file=sys.stderr)
        return 0
    now = time.time()
    for entry in repos:
        count = len(entry["sessions"])
        print(
            f"{entry['repo']} (@{entry['label']}): {count} session{'s' if count != 1 else ''},"
            f" ${entry['cost_usd']:.4f}, {entry['turns']} turns"
        )
        for s in entry["sessions"]:
            print(
                f'  {s["session_id"]}  {s["status"]:<8}  "{s["topic"]}"  {s["message_count"]} asks'
                f"  ${float(s['cost_usd']):.4f}  {s['turns']} turns"
                f"  used {_age(now - float(s['last_used_at']))} ago  by {s['asker']}"
            )
    return 0


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def cmd_intercom_import(*, file: str) -> int:
    try:
        text = read_regular(file, IMPORT_LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise BadInput(f"cannot read {file}: {reason}") from None
    try:
        state = read_seed_state(text, now=time.time())
    except CorruptState as exc:  # the seed: keep it aside, go on from an empty state
        _write_replaced(file, text, json.dumps(empty_state(), indent=2) + "\n", "corrupt")
        print(
            f"[Intercom] {file} is corrupt ({exc}): kept as {file}.corrupt.backup,"
            " replaced by an empty state",
            file=sys.stderr,
        )
        state = SeedState(())
    added = import_sessions(Intercom(Room.open(os.environ)), list(state.sessions))
    if state.migrated is not None:
        _write_replaced(file, text, json.dumps(state.migrated, indent=2) + "\n", "v1")
        print(f"{file}: v1 migrated to v2 (backup: {file}.v1.backup)", file=sys.stderr)
    print(f"imported {added} of {len(state.sessions)} sessions from {file}", file=sys.stderr)
    return 0


def _write_replaced(path: str, original: str, migrated: str, why: str) -> None:
    """The seed's file handling on disk: the old file kept as ``.WHY.backup`` (``v1``
    before a migration, ``corrupt`` before an empty state), then the new one in place."""
    backup = f"{path}.{why}.backup"
    for target, text in ((backup, original), (f"{path}.v2.tmp", migrated)):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(target, flags, 0o600)
        except OSError as exc:
            raise BadInput(f"cannot write {target}: {exc.strerror}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    os.replace(f"{path}.v2.tmp", path)  # noqa: PTH105


def cmd_intercom_forget(*, target: str) -> int:
    gone = forget(Intercom(Room.open(os.environ)), target)
    for session_id in gone:
        print(f"forgot intercom session {session_id}", file=sys.stderr)
    return 0


def cmd_intercom_settings(
    *, max_turns: int | None, session_limit: int | None, as_json: bool
) -> int:
    intercom = Intercom(Room.open(os.environ))
    intercom.change_settings(max_turns=max_turns, session_limit=session_limit)
    values = intercom.settings()
    if as_json:
        print_json(values)
    else:
        for key, value in values.items():
            print(f"{key}: {value}")
    return 0


# The commands: ask, intercom, intercom import|forget|settings (loaded by cli.app).


@click.command("ask")
@click.argument("repo", metavar="REPO", help="a directory, or the @name of a room member")
@click.argument("question", metavar="QUESTION", nargs=-1, help="else --file or stdin")
@click.option("--file", metavar="FILE", help="read the question from a file ('-' for stdin)")
@click.option("--new", is_flag=True, help="start a new session, whatever the rules")
@click.option("--resume", metavar="ID", help="resume this session, whatever the rules")
@click.option("--max-turns", type=COUNT, metavar="N", help="agentic turns at most (room's setting)")
@click.option(
    "--timeout",
    type=TIMEOUT,
    default=600.0,
    metavar="SECONDS",
    help="end the client after this long (default: 600)",
)
@click.option("--json", "as_json", is_flag=True, help="print the whole record as JSON")
@click.option("--quiet", is_flag=True, help="no [Intercom] reasoning on stderr")
def ask_command(
    repo: str,
    question: tuple[str, ...],
    file: str | None,
    new: bool,
    resume: str | None,
    max_turns: int | None,
    timeout: float,
    as_json: bool,
    quiet: bool,
) -> int:
    return cmd_ask(
        repo=repo,
        question=question,
        file=file,
        new=new,
        resume=resume,
        max_turns=max_turns,
        timeout=timeout,
        as_json=as_json,
        quiet=quiet,
    )


@click.group("intercom", cls=Group, invoke_without_command=True)
@json_option
@click.pass_context
def intercom_command(ctx: click.Context, as_json: bool) -> int:
    return own(ctx, lambda: cmd_intercom(as_json=as_json))


@intercom_command.command("import")
@click.argument("file", metavar="FILE", help="e.g. /tmp/cross-agent-sessions.json")
def _import(file: str) -> int:
    """Take over the sessions of the seed's state file."""
    return cmd_intercom_import(file=file)


@intercom_command.command("forget")
@click.argument("target", metavar="REPO|SESSION", help="a repository folder or a session id")
def _forget(target: str) -> int:
    """Forget a session, or every session of a repository."""
    return cmd_intercom_forget(target=target)


@intercom_command.command("settings")
@click.option("--max-turns", type=COUNT, metavar="N", help="per ask (default 10)")
@click.option("--session-limit", type=COUNT, metavar="N", help="sessions kept per repository (5)")
@json_option
def _settings(max_turns: int | None, session_limit: int | None, as_json: bool) -> int:
    """Show or change the default max turns, session limit."""
    return cmd_intercom_settings(max_turns=max_turns, session_limit=session_limit, as_json=as_json)
