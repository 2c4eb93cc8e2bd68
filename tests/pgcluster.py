"""A throw-away PostgreSQL cluster for the tests: Debian's server binaries, a temporary
directory, a private port; no system service, nothing left behind once stopped.

The server refuses to run as root: under root the cluster belongs to the ``postgres``
account (made by Debian's package). The room connects as its own role with a password
taken from a password file of mode 0600 (``PGPASSFILE``), never from a URL.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.poll import poll

RUNUSER = shutil.which("runuser", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin") or "runuser"
"""util-linux's ``runuser``, which runs the server as ``postgres`` under root: in the
system folders too, which a root shell started without them (``env -i``) leaves off
its PATH."""
ROLE = "room"
DATABASE = "agentroom"


def server_bin() -> Path | None:
    """The folder of Debian's newest PostgreSQL server binaries, if installed."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: int(Path(p).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).resolve().parent if pg_ctl else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """One running cluster; ``url(schema)`` names a room in it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="agent-room-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.password = os.urandom(12).hex()
        self.passfile = self.root / "pgpass"
        self.user = "postgres" if os.geteuid() == 0 else None
        self._init()

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user:
            command = [RUNUSER, "-u", self.user, "--", *command]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=120, check=False, cwd="/"
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip()}")
        return done

    def _init(self) -> None:
        if self.user:
            shutil.chown(self.root, self.user)
        self.root.chmod(0o700)
        superuser = self.user or os.environ.get("USER") or "postgres"
        self._run("initdb", "-D", str(self.data), "-U", superuser, "-A", "trust", "-E", "UTF8")
        hba = self.data / "pg_hba.conf"
        hba.write_text(
            f"local all {superuser} trust\n"
            "local all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n"
        )
        self.superuser = superuser
        self.start()
        self.psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{self.password}'")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        self.passfile.write_text(f"127.0.0.1:{self.port}:*:{ROLE}:{self.password}\n")
        self.passfile.chmod(0o600)
        if self.user:
            shutil.chown(self.passfile, "root")

    def start(self) -> None:
        """Start the server (again) on the same port and data; nothing if it runs."""
        if self._run("pg_ctl", "status", "-D", str(self.data), check=False).returncode == 0:
            return
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
            " -c fsync=off -c full_page_writes=off"
            " -c max_connections=300 -c shared_buffers=32MB"
        )
        self._run(
            "pg_ctl",
            "start",
            "-w",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``immediate``: as if it died)."""
        self._run("pg_ctl", "stop", "-w", "-D", str(self.data), "-m", mode, check=False)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` as the cluster's superuser; return what it printed."""
        done = self._run(
            "psql",
            "-X",
            "-q",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.root),
            "-p",
            str(self.port),
            "-U",
            self.superuser,
            "-d",
            database,
            "-c",
            sql,
        )
        return done.stdout

    def url(self, schema: str | None = None) -> str:
        """A room's URL (without its password): the schema is the room inside the database."""
        base = f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"
        return f"{base}?options=-csearch_path%3D{schema}" if schema else base

    def new_room(self, schema: str) -> str:
        """Make an empty schema for one room; return its URL (naming the password file)."""
        self.psql(f"CREATE SCHEMA {schema} AUTHORIZATION {ROLE}", DATABASE)
        return self.passfile_url(self.url(schema))

    def env(self) -> dict[str, str]:
        """What a process needs to reach the cluster (the password file)."""
        return {"PGPASSFILE": str(self.passfile), "PGCONNECT_TIMEOUT": "5"}

    def passfile_url(self, url: str) -> str:
        """``url`` naming the cluster's password file (libpq's ``passfile``)."""
        return f"{url}{'&' if '?' in url else '?'}passfile={self.passfile}"

    def destroy(self) -> None:
        """Stop the server and remove every file of the cluster."""
        self.stop("immediate")

        def removed() -> bool:
            shutil.rmtree(self.root, ignore_errors=True)
            return not self.root.exists()

        poll(removed, timeout=10, step=0.1)  # a server's last files may come meanwhile
