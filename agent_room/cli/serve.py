"""``agent-room serve``: the console in a web browser, through textual-serve.

Loopback unless told otherwise, and private on every address (``adapters.web``): a
browser opens the door with a token, taken from ``$AGENT_ROOM_SERVE_TOKEN`` (never
printed) or made here and printed once, as a one-time link, on standard output (never
a command-line argument, never logged). Each browser gets its own console process on
the same room, up to ``--max-consoles``, so approving and rejecting work there as here;
entering an agent needs a terminal and is refused in the page. See docs/guide/browser.md.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import socket
from collections.abc import Mapping, Sequence

import click

from agent_room.adapters.web import RoomServer
from agent_room.cli.params import PORT
from agent_room.cli.reach import console_command
from agent_room.turn.core.errors import BadInput

TOKEN_VARIABLE = "AGENT_ROOM_SERVE_TOKEN"  # noqa: S105 - the variable's name
MIN_TOKEN = 16


def serve_token(environ: Mapping[str, str]) -> tuple[str, bool]:
    """The token a browser opens the door with, and whether it was made here (then it
    is printed once); on every address, loopback included: other users of the machine
    and other sites' pages reach the loopback too."""
    given = environ.get(TOKEN_VARIABLE)
    if given is not None:
        if len(given) < MIN_TOKEN or not given.isprintable() or " " in given:
            raise BadInput(
                f"{TOKEN_VARIABLE} is too weak: use at least {MIN_TOKEN} printable characters"
                " without spaces"
            )
        return given, False
    return secrets.token_urlsafe(24), True


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


def cmd_serve(*, host: str, port: int, max_consoles: int, allow_host: Sequence[str]) -> int:
    """Serve the console until interrupted."""
    token, made = serve_token(os.environ)
    os.environ.pop(TOKEN_VARIABLE, None)  # read: the consoles and what they start never see it
    if max_consoles < 1:
        raise BadInput("--max-consoles must be at least 1")
    for name in allow_host:
        if not name or any(c.isspace() or c in "/:@[]" for c in name):
            raise BadInput(f"invalid --allow-host {name!r}: give a host name without a port")
    check_port(host, port)
    allowed = [*allow_host, *([] if _is_address(host) else [host])]
    RoomServer(
        console_command(os.environ, "--served"),
        host=host,
        port=port,
        token=token,
        token_made=made,
        allowed_hosts=allowed,
        max_consoles=max_consoles,
    ).serve()
    return 0


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# The command (loaded by cli.app when they run).


@click.command("serve")
@click.option("--host", default="127.0.0.1", help="the address to listen on (loopback)")
@click.option("--port", type=PORT, default=8760, help="the port (default: 8760)")
@click.option(
    "--max-consoles",
    type=int,
    default=4,
    help="console processes (browser tabs) at once; more are refused (default: 4)",
)
@click.option(
    "--allow-host",
    multiple=True,
    metavar="NAME",
    help="a host name the browser may use besides IP addresses and localhost"
    " (a reverse proxy's name); repeat for more",
)
def serve_command(host: str, port: int, max_consoles: int, allow_host: tuple[str, ...]) -> int:
    return cmd_serve(host=host, port=port, max_consoles=max_consoles, allow_host=allow_host)
