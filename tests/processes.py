"""The child processes of this process, read from /proc (Linux), for tests that nothing they start outlives them."""

from __future__ import annotations

import os


def children(running: bool = False) -> set:
    """The pids of this process's children (by the parent pid in ``/proc/PID/stat``): zombies included, unless ``running``."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and not (running and fields[0] == "Z"):
            found.add(entry)
    return found
