"""The ctypes binding of libpq (``store.libpq``) that the room's short processes use:
loading it lets the rest of the process go on, and what it sends and reads back against
the real server of the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LOADER = """
import os, sys, threading
from agent_room.store import libpq

said = []
def load():
    try:
        libpq._dlopen(sys.argv[1])
    except OSError as exc:
        said.append(str(exc))
loader = threading.Thread(target=load)
loader.start()
fd = os.open(sys.argv[1], os.O_WRONLY)  # Python code, while the loader waits in dlopen
os.write(fd, b"not a library")
os.close(fd)
loader.join()
print(*said)
"""


def test_loading_the_library_lets_the_other_threads_run(tmp_path: Path) -> None:
    """A hook imports its handlers while libpq loads in a thread of its own: the loader
    must not hold the GIL. Here it loads a FIFO, which the dynamic linker waits on until
    the main thread (Python code) opens it: holding the GIL, the two would wait for
    each other for ever."""
    fifo = tmp_path / "library"
    os.mkfifo(fifo)
    try:
        done = subprocess.run(
            [sys.executable, "-c", LOADER, str(fifo)],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("loading the library held the GIL: the process stood still") from None
    assert done.stdout.startswith(f"{fifo}: ")  # the dynamic linker's reason, named
