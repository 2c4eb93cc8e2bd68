"""PostgreSQL's client library never speaks on an agent's terminal.

libpq prints the server's notices (``WARNING:``, ``NOTICE:``) on standard error unless
told otherwise, and itself warns there about a password file open to others; for a hook
or ``send`` that is the agent's pane. Both go to the room's error log instead. A real
cluster; the server's warning comes from a view over the room's schema table, which
every process of the room reads first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from agent_room.room.service import Room
from tests.conftest import FIXTURES, write_room_conf
from tests.pgcluster import DATABASE, ROLE, Cluster

WARNING = "a warning from the server"


def _run(
    home: Path, *args: str, stdin: bytes = b"", **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_ROOM_", "PG"))}
    environ.update({"AGENT_ROOM_HOME": str(home), "AGENT_ROOM_WATCH": "off", **env})
    return subprocess.run(
        [sys.executable, "-m", "agent_room", *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )


def _noisy_room(tmp_path: Path, cluster: Cluster, passfile: Path | None = None) -> Path:
    schema = f"noisy_{time.monotonic_ns()}"
    home = tmp_path / "room"
    url = cluster.new_room(schema)
    if passfile is not None:
        url = url.replace(str(cluster.passfile), str(passfile))
    write_room_conf(home, url)
    if passfile is None:
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        room.join("api")
        room.join("web")
        room.close()
        cluster.psql(
            f"ALTER TABLE {schema}.agent_room_schema RENAME TO agent_room_schema_t;"
            f" CREATE FUNCTION {schema}.noisy() RETURNS boolean LANGUAGE plpgsql"
            f" AS $$BEGIN RAISE WARNING '{WARNING}'; RETURN true; END$$;"
            f" CREATE VIEW {schema}.agent_room_schema AS"
            f" SELECT version FROM {schema}.agent_room_schema_t WHERE {schema}.noisy();"
            f" ALTER VIEW {schema}.agent_room_schema OWNER TO {ROLE};"
            f" ALTER FUNCTION {schema}.noisy() OWNER TO {ROLE}",
            DATABASE,
        )
    return home


def test_the_servers_warnings_reach_the_rooms_log_not_send_or_a_hook(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    home = _noisy_room(tmp_path, pg_cluster)
    sent = _run(home, "send", "@web", "hello", "--as", "api")
    assert sent.returncode == 0, sent.stderr
    assert sent.stderr.startswith("message #1 queued for @web"), sent.stderr
    assert "WARNING" not in sent.stderr
    payload = json.loads((FIXTURES / "claude-code-2.1.330" / "hook-Stop.json").read_text())
    hook = _run(home, "hook", "Stop", stdin=json.dumps(payload).encode(), AGENT_ROOM_NAME="api")
    assert (hook.returncode, hook.stderr) == (0, "")
    logged = (home / "errors.log").read_text()
    assert f"libpq: WARNING:  {WARNING}" in logged


def test_a_password_file_open_to_others_is_said_in_the_log_not_on_the_terminal(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    passfile = tmp_path / "pgpass"
    shutil.copy(pg_cluster.passfile, passfile)
    passfile.chmod(0o644)
    home = _noisy_room(tmp_path, pg_cluster, passfile)
    sent = _run(home, "send", "@web", "hello", "--as", "api")
    assert sent.returncode != 0  # no password: the server refuses, in one line
    assert len(sent.stderr.strip().splitlines()) == 1, sent.stderr
    assert "WARNING" not in sent.stderr
    assert f"password file {passfile} is open to others" in (home / "errors.log").read_text()
