"""What machine and packages a benchmark ran on (shared by the benchmark scripts)."""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import platform


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
