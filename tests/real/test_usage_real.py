"""What a link's exchange between two real Claude Code agents cost: ``usage --by link
--json`` gives the tokens the model stand-in reported for the link's turns on both sides
(read from the agents' own transcripts by the watch), and the cost genai-prices gives
for them; ``--by agent`` and ``who`` agree."""

from __future__ import annotations

import json
from typing import Any

from agent_room.demo.model_api import Replied, Reply, Script
from tests.prices import listed_price
from tests.real.conftest import TURN, RealRoom

ASK = "Which fields does the task list need? (q-81)"
ANSWER = "The list view needs id, title and done for each task (ans-82)."
THANKS = "Thanks: GET /tasks returns id, title and done (back-83)."


def _usage(real: RealRoom, *args: str) -> dict[str, Any]:
    result = real.run("usage", "--since", "1d", *args, "--json")
    assert result.code == 0, result.err
    found: dict[str, Any] = json.loads(result.out)
    return found


def _price(replied: Replied) -> float:
    usage = replied.usage
    return listed_price(
        replied.model,
        usage["input_tokens"],
        usage["output_tokens"],
        usage["cache_read_input_tokens"],
        usage["cache_creation_input_tokens"],
    )


def _link_keys(real: RealRoom, link_id: int) -> set[str]:
    """The requests the room counts for the link: those of its judged turns."""
    room = real.open()
    try:
        found = room.store.conn.execute(
            "SELECT u.key FROM usage u JOIN link_turns t ON t.turn_id = u.turn_id"
            " AND t.session_id = u.session_id WHERE t.link_id = $1",
            (link_id,),
        ).fetchall()
    finally:
        room.close()
    return {str(r[0]) for r in found}


def test_a_links_exchange_costs_the_tokens_the_stand_in_reported(
    real: RealRoom, script: Script
) -> None:
    script.add(
        "LINK-OPEN", Reply("Asking @frontend.", bash=f'agent-room send @frontend "{ASK}" --link')
    )
    script.add("q-81", Reply(ANSWER))
    script.add("ans-82", Reply(THANKS))
    real.start("backend", "frontend")
    both = ("backend", "frontend")
    real.type("backend", "LINK-OPEN: ask frontend what the list needs")
    real.wait(lambda: real.seen.turns_showing("frontend", f"[From @backend] {THANKS}"), TURN, *both)
    real.wait(lambda: all(real.member(n)["state"] == "idle" for n in both), TURN, *both)
    replied = {r.id: r for r in real.api.replied}
    answer = next(r for r in replied.values() if r.text == ANSWER)
    thanks = next(r for r in replied.values() if r.text == THANKS)
    assert answer.usage["cache_read_input_tokens"] > 0  # the stand-in reports all four

    def settled() -> bool:
        lines = _usage(real, "--by", "link")["lines"]
        return bool(lines) and {answer.id, thanks.id} <= _link_keys(real, lines[0]["link"])

    real.wait(settled, TURN, *both)
    (line,) = _usage(real, "--by", "link")["lines"]
    keys = _link_keys(real, line["link"])
    assert keys <= replied.keys()  # every request counted is one the stand-in answered
    counted = [replied[k] for k in keys]
    assert line["input_tokens"] == sum(r.usage["input_tokens"] for r in counted)
    assert line["output_tokens"] == sum(r.usage["output_tokens"] for r in counted)
    assert line["cache_read_tokens"] == sum(r.usage["cache_read_input_tokens"] for r in counted)
    assert line["cache_write_tokens"] == sum(
        r.usage["cache_creation_input_tokens"] for r in counted
    )
    assert line["cost_usd"] == round(sum(_price(r) for r in counted), 6)
    assert set(line["sides"]) == {"backend", "frontend"}  # what it cost both sides
    assert (line["initiator"], line["responder"]) == ("backend", "frontend")

    table = real.run("usage", "--since", "1d", "--by", "link").out.splitlines()
    assert table[1].startswith(f"#{line['link']} @backend <-> @frontend")
    assert [row.split()[0] for row in table[2:4]] == ["@backend", "@frontend"]  # its sides
    assert table[-1].startswith("total")

    agents = {a["key"]: a for a in _usage(real, "--by", "agent")["lines"]}
    assert set(agents) == {"backend", "frontend"}
    for name in both:
        side = line["sides"][name]
        assert side["total_tokens"] <= agents[name]["total_tokens"]
        assert real.member(name)["cost_today_usd"] >= side["cost_usd"]
