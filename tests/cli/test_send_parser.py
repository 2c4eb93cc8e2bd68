"""``send``'s one parser (``cli.quick.parse_send``): every shape of the command line, as
argparse read it before, for the quick path and the full one alike."""

from __future__ import annotations

from typing import Any

import pytest

from agent_room.turn.core.errors import BadInput
from agent_room.turn.send import parse_send
from tests.cli.conftest import one_line_error
from tests.conftest import Cli


def _parsed(*args: str) -> dict[str, Any]:
    fields = parse_send(args)
    assert fields is not None
    return fields


def test_words_and_options_in_any_order() -> None:
    fields = _parsed("--handover", "@b", "some", "--todo", "merge it", "words", "--as=a")
    assert (fields["recipient"], fields["text"]) == ("@b", ["some", "words"])
    assert (fields["handover"], fields["todo"], fields["as_name"]) == (True, "merge it", "a")
    assert (fields["link"], fields["file"], fields["changed"]) == (False, None, "")


def test_a_dash_word_is_body_after_double_dash_or_as_a_number() -> None:
    assert _parsed("@b", "--", "--handover", "-x")["text"] == ["--handover", "-x"]
    assert _parsed("@b", "-5", "degrees")["text"] == ["-5", "degrees"]
    assert _parsed("@b", "--file", "-")["file"] == "-"


def test_a_unique_prefix_names_its_option() -> None:
    assert _parsed("@b", "x", "--hand")["handover"] is True
    assert _parsed("@b", "x", "--close")["close_link"] is True


def test_help_anywhere_asks_for_help() -> None:
    assert parse_send(["@b", "words", "--help"]) is None
    assert parse_send(["-h"]) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "required: @NAME"),
        (("@b", "x", "--bogus"), "unrecognized arguments: --bogus"),
        (("@b", "x", "--as"), "argument --as: expected one argument"),
        (("@b", "--file", "--handover"), "argument --file: expected one argument"),
        (("@b", "x", "--c"), "ambiguous option: --c"),
        (("@b", "x", "--link=yes"), "unrecognized arguments: --link=yes"),
    ],
)
def test_bad_shapes_are_refused(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(BadInput, match=message) as raised:
        parse_send(args)
    assert str(raised.value).endswith("(see: agent-room send --help)")


def test_the_command_line_says_it_in_one_line_and_writes_nothing(cli: Cli) -> None:
    assert cli("join", "backend").code == cli("join", "frontend").code == 0
    for args, message in (
        (("hi", "--as"), "argument --as: expected one argument"),
        (("--handover", "hi", "--bogus"), "unrecognized arguments: --bogus"),
    ):
        result = cli("send", "@frontend", *args, name="backend")
        one_line_error(result, 2, message, "(see: agent-room send --help)")
    assert cli("history", "100", "--json").out == "[]\n"


def test_help_shows_every_option(cli: Cli) -> None:
    shown = cli("send", "--help")
    assert shown.code == 0
    for option in ("--file", "--handover", "--todo", "--link", "--close-link", "--as"):
        assert option in shown.out
    assert "Send a directed message to @NAME." in shown.out
