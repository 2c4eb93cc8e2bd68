"""What ``agent-room start --agent codex|gemini`` gives the client, and that the user's own
configuration is never written."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from agent_room.core.client_launch import CODEX_OVERRIDES_FILE, codex_args, codex_trusted_hash
from agent_room.room.clients import client_launch, hook_command
from agent_room.turn.core.clients import CODEX, GEMINI


def _tree(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_mode, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_codex_gets_every_hook_trusted_and_no_daemon() -> None:
    args = codex_args(lambda e: f"hook {e}", cwd="/w/app", room="/r")
    assert args[0] == "--no-daemon"  # the daemon runs every hook with the first pane's env
    values = [args[i + 1] for i, a in enumerate(args) if a == "-c"]
    assert 'projects={"/w/app"={trust_level="trusted"}}' in values
    assert 'sandbox_workspace_write.writable_roots=["/r"]' in values
    assert "tui.disable_paste_burst=true" in values
    assert "allow_login_shell=false" in values
    state = next(v for v in values if v.startswith("hooks.state="))
    for event in CODEX.events:
        assert any(v.startswith(f"hooks.{event}=") and f"hook {event}" in v for v in values)
        timeout = 3 if event in {"SessionEnd", "Interrupt"} else 5
        key = f"{CODEX_OVERRIDES_FILE}:{codex_trusted_hash(event, f'hook {event}', timeout)}"
        assert key.split(":", 1)[1] in state


def test_the_trusted_hash_is_codexs_recipe() -> None:
    """sha256 over the compact sorted JSON of the handler group, as Codex 0.169.0 writes it
    (the real tier shows Codex running hooks trusted this way without a review screen)."""
    assert codex_trusted_hash("UserPromptSubmit", "x", 5) == (
        "sha256:"
        + hashlib.sha256(
            b'{"event_name":"user_prompt_submit","hooks":[{"async":false,"command":"x",'
            b'"timeout":5,"type":"command"}]}'
        ).hexdigest()
    )


def test_gemini_home_links_the_users_and_merges_settings(tmp_path: Path) -> None:
    home = tmp_path / "user"
    dot = home / ".gemini"
    (dot / "tmp").mkdir(parents=True)
    (dot / "oauth_creds.json").write_text("{}")
    own_hook = {"hooks": [{"type": "command", "command": "mine"}]}
    user = {
        "security": {"auth": {"selectedType": "oauth-personal"}},
        "hooks": {"AfterAgent": [own_hook]},
    }
    (dot / "settings.json").write_text(json.dumps(user))
    before = _tree(home)
    room = tmp_path / "room"

    args, env = client_launch(
        "gemini", name="ui", cwd=str(tmp_path), home=str(room), environ={"HOME": str(home)}
    )

    assert args == []
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    ours = Path(env["GEMINI_CLI_HOME"]) / ".gemini"
    assert ours.parent.parent == room / "clients"
    assert (ours / "tmp").resolve() == dot / "tmp"  # sessions stay the user's
    assert (ours / "oauth_creds.json").is_symlink()
    settings = json.loads((ours / "settings.json").read_text())
    assert settings["security"] == user["security"]
    assert settings["general"]["sessionRetention"] == {"enabled": False}
    assert settings["hooks"]["AfterAgent"][0] == own_hook  # the user's own hook still runs
    assert set(settings["hooks"]) == set(GEMINI.events)
    assert settings["hooks"]["AfterAgent"][1]["hooks"][0]["command"] == hook_command(
        "gemini", "AfterAgent"
    )
    policy = Path(settings["policyPaths"][0])
    assert 'commandPrefix = "agent-room"' in policy.read_text()
    assert os.stat(ours / "settings.json").st_mode & 0o077 == 0
    assert _tree(home) == before  # nothing of the user's was written

    client_launch(
        "gemini", name="ui", cwd=str(tmp_path), home=str(room), environ={"HOME": str(home)}
    )
    assert json.loads((ours / "settings.json").read_text()) == settings  # started again


def test_codex_keeps_the_users_trusted_hooks_and_writable_roots(tmp_path: Path) -> None:
    """An override replaces a whole table: what the user had there is carried over."""
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        '[sandbox_workspace_write]\nwritable_roots = ["/data"]\n\n'
        '[hooks.state."/u/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n'
    )
    args, env = client_launch(
        "codex", name="api", cwd="/w", home=str(tmp_path / "room"), environ={"HOME": str(tmp_path)}
    )
    assert env == {}
    values = [args[i + 1] for i, a in enumerate(args) if a == "-c"]
    room = str((tmp_path / "room").resolve())
    assert f'sandbox_workspace_write.writable_roots=["/data","{room}"]' in values
    state = next(v for v in values if v.startswith("hooks.state="))
    assert '"/u/.codex/hooks.json:stop:0:0"={trusted_hash="sha256:abc"}' in state
    assert f'"{CODEX_OVERRIDES_FILE}:stop:0:0"' in state


def test_a_gemini_session_does_not_see_that_it_runs_under_ci(tmp_path: Path) -> None:
    """Gemini CLI exits at once, without a prompt, when it sees CI variables."""
    from agent_room.core.client_launch import ci_markers
    from agent_room.room.clients import resume_argv

    environ = {"CI": "true", "CI_JOB_ID": "7", "CONTINUOUS_INTEGRATION": "1", "HOME": "/h"}
    assert ci_markers("gemini", environ) == ["CI", "CI_JOB_ID", "CONTINUOUS_INTEGRATION"]
    assert ci_markers("codex", environ) == []
    (tmp_path / "room").mkdir(mode=0o700)  # the room its session was started in
    argv = resume_argv(
        "gemini",
        name="docs",
        session_id="s-1",
        cwd=str(tmp_path),
        home=str(tmp_path / "room"),
        environ={**environ, "HOME": str(tmp_path)},
        binary="gemini",
    )
    assert argv[0] == "env"
    assert {"-uCI", "-uCI_JOB_ID", "-uCONTINUOUS_INTEGRATION"} <= set(argv)
