"""What every benchmark script shares: clocks, load, logging, the machine record, child processes, result files."""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata as md
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swvp.persistence import atomic_write_text

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

Stamp = tuple[float, float]  # (wall, cpu) seconds


# -- clocks ------------------------------------------------------------------------------------------------------
def stamp() -> Stamp:
    """(wall, CPU) clocks now: ``time.perf_counter`` and the process's ``time.process_time``."""
    return time.perf_counter(), time.process_time()


def since(t0: Stamp, t1: Stamp | None = None) -> Stamp:
    """(wall, CPU) seconds from ``t0`` to ``t1`` (default: now)."""
    t1 = stamp() if t1 is None else t1
    return t1[0] - t0[0], t1[1] - t0[1]


def best_of(fn: Callable[[], object], repeats: int, warm: bool = False) -> tuple[Stamp, object]:
    """Run ``fn`` ``repeats`` times (after one untimed call if ``warm``): the fastest wall and the fastest CPU time
    over the runs (each the least disturbed estimate on a shared machine) and the last result."""
    if warm:
        fn()
    wall = cpu = float("inf")
    result = None
    for _ in range(repeats):
        t0 = stamp()
        result = fn()
        w, c = since(t0)
        wall, cpu = min(wall, w), min(cpu, c)
    return (wall, cpu), result


def warm_up(fn: Callable[[], object]) -> float:
    """Wall seconds of ``fn``: a run that loads (or compiles) swvp's numba kernels before anything is timed."""
    t0 = stamp()
    fn()
    return since(t0)[0]


# -- machine and load --------------------------------------------------------------------------------------------
def load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


def meta(packages: tuple[str, ...] = (), **extra) -> dict:
    """The record every result file starts with: date, machine, versions (python, numpy, numba, swvp and
    ``packages``), the load average now; ``extra`` fields are added as given."""
    mem = memory_gb()
    versions = {"python": platform.python_version()}
    versions.update({p: package_version(p) for p in ("numpy", "numba", "swvp", *packages)})
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"platform": platform.platform(), "cpu": cpu_name(), "cpus": os.cpu_count(),
                        "memory_gb": None if mem is None else round(mem, 1)},
            "versions": versions, "load_start": load(), **extra}


def title(name: str, m: dict, load_end: list[float], quick: bool = False) -> str:
    """The first line of a benchmark's printed table."""
    return (f"# swvp {name} benchmark — {m['date']}, {m['machine']['cpu']} ({m['machine']['cpus']} cpus), load "
            f"{m['load_start']} → {load_end}{' — QUICK (slices)' if quick else ''}")


# -- memory and child processes ----------------------------------------------------------------------------------
def proc_mb(field: str) -> float:
    """A /proc/self/status memory field (``VmRSS:`` now, ``VmHWM:`` peak) in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def ru_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_result(out: dict) -> None:
    """In a child process: hand ``out`` back to :func:`run_child` (one JSON line, the last on stdout)."""
    print(json.dumps(out))


def run_child(script: str, args: list[str]) -> dict:
    """Run ``script`` with ``args`` in a fresh Python process (e.g. for its peak memory); its :func:`child_result`."""
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- result files ------------------------------------------------------------------------------------------------
def out_path(arg: str | None, name: str, quick: bool = False) -> Path:
    """Where results go: ``arg`` if given, else ``results/NAME.json`` (``$TMPDIR/swvp-NAME.quick.json`` if quick)."""
    if arg:
        return Path(arg)
    return Path(tempfile.gettempdir()) / f"swvp-{name}.quick.json" if quick else RESULTS / f"{name}.json"


def write_json(path: Path, obj: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(obj, indent=1, ensure_ascii=False, default=float) + "\n")
    log(f"wrote {path}")
