"""What every benchmark script shares: the machine and package versions it ran on, the load, timing stamps, logging.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import os
import platform
import sys
import time


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine is shared: timings are read against them)."""
    return [round(x, 2) for x in os.getloadavg()]


def log(msg: str) -> None:
    """Progress on stderr (stdout carries the results)."""
    print(msg, file=sys.stderr, flush=True)


def stamp() -> tuple[float, float]:
    """(wall, CPU) clock readings of this process."""
    return time.perf_counter(), time.process_time()


def since(t0: tuple[float, float], t1: tuple[float, float] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds from ``t0`` to ``t1`` (default: now)."""
    t1 = stamp() if t1 is None else t1
    return t1[0] - t0[0], t1[1] - t0[1]


def package_version(pkg: str) -> str | None:
    """The installed version of ``pkg``, or None."""
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return None


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo (``platform.processor()`` where that is unreadable)."""
    cpu = platform.processor()
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as f:
        cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    return cpu


def memory_gb() -> float | None:
    """Total memory in GB from /proc/meminfo, or None."""
    try:
        with open("/proc/meminfo") as f:
            return int(f.readline().split()[1]) / 1024 ** 2
    except (OSError, ValueError, IndexError):
        return None
