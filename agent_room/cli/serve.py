"""``agent-room serve``: the console in a web browser, through textual-serve.

Loopback only unless told otherwise; off loopback every request carries a token, taken
from ``$AGENT_ROOM_SERVE_TOKEN`` or made here and printed once on this terminal (never
a command-line argument, never logged). Each browser gets its own console process on
the same room, so approving and rejecting work there as here; entering an agent needs
a terminal and is refused in the page.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import shlex
import socket

from agent_room.core.errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

TOKEN_VARIABLE = "AGENT_ROOM_SERVE_TOKEN"  # noqa: S105 - the variable's name
MIN_TOKEN = 16


def loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_token(host: str, environ: Mapping[str, str]) -> str | None:
    """The token requests must carry: the environment's, else a new one off loopback."""
    given = environ.get(TOKEN_VARIABLE)
    if given is not None:
        if len(given) < MIN_TOKEN or not given.isprintable() or " " in given:
            raise BadInput(
                f"{TOKEN_VARIABLE} is too weak: use at least {MIN_TOKEN} printable characters"
                " without spaces"
            )
        return given
    return None if loopback(host) else secrets.token_urlsafe(24)


def check_port(host: str, port: int) -> None:
    """Refuse at once, in one line, an address this process cannot listen on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise BadInput(
                    f"port {port} on {host} is in use: choose another with --port"
                ) from None
            raise BadInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        except UnicodeError:
            raise BadInput(f"invalid host {host!r}") from None


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the console until interrupted."""
    from agent_room.cli.reach import console_command

    token = serve_token(args.host, os.environ)
    check_port(args.host, args.port)
    from agent_room.adapters.web import RoomServer

    command = shlex.join(console_command(os.environ, "--served"))
    RoomServer(command, host=args.host, port=args.port, token=token).serve()
    return 0
