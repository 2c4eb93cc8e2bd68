"""The memory commands as a user meets them: ledger, its statistics, bad input."""

from __future__ import annotations

import json

from tests.conftest import Cli


def _handover(cli: Cli, sender: str, recipient: str) -> int:
    sent = cli("send", f"@{recipient}", "--handover", "--changed", "x", "--todo", "y", name=sender)
    assert sent.code == 0, sent
    return int(sent.out.strip())


def test_ledger_text_json_and_stats(cli: Cli) -> None:
    for name in ("api", "web"):
        assert cli("join", name).code == 0
    first = _handover(cli, "api", "web")
    second = _handover(cli, "web", "api")
    assert cli("approve", str(first)).code == 0
    assert cli("reject", str(second), "--reason", "later").code == 0
    text = cli("ledger")
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0].split()[:4] == ["ID", "FROM", "TO", "OUTCOME"]
    assert lines[1].split()[:4] == [f"#{first}", "@api", "@web", "approved"]
    assert lines[2].split()[:4] == [f"#{second}", "@web", "@api", "rejected"]
    only = json.loads(cli("ledger", "--agent", "api", "--since", "1h", "--json").out)
    assert [i["id"] for i in only] == [first, second]
    stats = json.loads(cli("ledger", "--stats", "--json").out)
    assert stats["pairs"]["api -> web"]["approval_rate"] == 1.0
    assert stats["agents"]["web"]["total"] == 2
    table = cli("ledger", "--stats").out
    assert "api -> web" in table
    assert "@web" in table


def test_ledger_bad_input(cli: Cli) -> None:
    for args, fragment in (
        (("ledger", "--since", "soon"), "invalid duration"),
        (("ledger", "--agent", "Bad Name"), "invalid name"),
    ):
        result = cli(*args)
        assert result.code != 0
        assert "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert fragment in result.err, result.err


def test_checkpoint_and_resume_print(cli: Cli) -> None:
    from agent_room.room.service import Room
    from tests.room.conftest import register

    room = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
    register(room, "api")
    register(room, "web")
    room.send("web", "api", "ship the \x1b[31mcontract")
    room.close()
    taken = cli("checkpoint", "api", "--note", "end of day")
    assert taken.code == 0, taken
    checkpoint = int(taken.out)
    listed = json.loads(cli("checkpoints", "api", "--json").out)
    assert [c["id"] for c in listed] == [checkpoint]
    assert "end of day" in cli("checkpoints").out
    printed = cli("resume", "api", "--print")
    assert printed.code == 0, printed
    assert printed.out.startswith(f"## Resuming @api from checkpoint #{checkpoint} (manual, ")
    assert "- message from @web: ship the \\x1b[31mcontract" in printed.out  # no live escape
    web = cli("resume", f"#{checkpoint}", "--mode", "agent", "--agent", "web", "--print")
    assert "ship the" in web.out


def test_checkpoint_bad_input(cli: Cli) -> None:
    assert cli("join", "api").code == 0
    for args, fragment in (
        (("checkpoint", "nobody"), "nobody named @nobody"),
        (("checkpoint", "api"), "no session the room knows of"),
        (("resume", "#42", "--print"), "no checkpoint #42"),
        (("resume", "api", "--print"), "no checkpoint of @api"),
        (("resume", "api", "--mode", "most", "--print"), "invalid mode"),
        (("resume", "api", "--mode", "agent", "--print"), "needs --agent"),
    ):
        result = cli(*args)
        assert result.code != 0, (args, result)
        assert "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert fragment in result.err, (fragment, result.err)


def test_entities_search_merge_and_bad_input(cli: Cli) -> None:
    from agent_room.core.entities import Mention
    from agent_room.room.entities import Entities
    from agent_room.room.service import Room

    room = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
    entities = Entities(room, threshold=0.99)
    ts = entities.mention(Mention("tool", "TypeScript", "types"), agent="api", source="t")
    tsx = entities.mention(Mention("tool", "Typescript 5", "v5"), agent="web", source="t")
    entities.mention(Mention("endpoint", "GET /tasks"), agent="api", source="t")
    room.close()
    listed = json.loads(cli("entities", "typescript", "--json").out)
    assert {e["id"] for e in listed} == {ts, tsx}
    assert listed[0]["mentioned_by"][0]["agent"] in {"api", "web"}
    only = json.loads(cli("entities", "--type", "endpoint", "--json").out)
    assert [e["name"] for e in only] == ["GET /tasks"]
    assert "GET /tasks" in cli("entities").out
    merged = cli("entities", "merge", f"#{ts}", f"#{tsx}")
    assert merged.code == 0, merged
    assert "is version 2" in merged.out
    for args, fragment in (
        (("entities", "merge", "#1"), "usage"),
        (("entities", "--type", "planet"), "invalid entity type"),
        (("entities", "merge", "#404", f"#{ts}"), "no entity #404"),
        (("entities", "--strategy", "loudest"), "invalid merge strategy"),
        (("entities", "resolve", "7", "--take"), "no open entity conflict #7"),
    ):
        result = cli(*args)
        assert result.code != 0, (args, result)
        assert "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert fragment in result.err, (fragment, result.err)
