"""What every benchmark script shares: clocks, load, logging, the machine record, child processes, result files."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
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


def bytecode_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's environment) without ``PYTHONDONTWRITEBYTECODE``: a measured child writes
    and reads ``.pyc`` files as an installed package does (with the variable set and no caches, every process
    compiles swvp's sources again)."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}


def tail(path: Path, n: int = 25) -> str:
    """The last ``n`` lines of a log file."""
    return "\n".join(Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[-n:])


def parse_child_result(path: Path) -> dict | None:
    """The last ``RESULT {json}`` line a child of ``_pipeline_children.py`` (or one built on it) wrote to its log."""
    from _pipeline_children import RESULT

    lines = [ln for ln in Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
             if ln.startswith(RESULT)]
    return json.loads(lines[-1][len(RESULT):]) if lines else None


def run_measured(cmd: list, log_path: Path, *, check: bool = True, env: dict | None = None,
                 cwd: str | Path | None = None) -> dict:
    """Run ``cmd`` as a child (stdin closed, stdout and stderr to ``log_path``; ``env`` and ``cwd`` as given, else
    this process's): its wall seconds, its own CPU seconds (user + sys, its waited-for descendants included) and
    peak RSS from ``os.wait4``; the load around it; the :func:`parse_child_result` it printed, if any."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    load0 = load()
    t0 = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as logf:
        proc = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    rec = {"cmd": [str(c) for c in cmd], "rc": proc.returncode, "wall_s": wall, "user_s": ru.ru_utime,
           "sys_s": ru.ru_stime, "cpu_s": ru.ru_utime + ru.ru_stime, "max_rss_mb": ru.ru_maxrss / 1024,
           "load_before": load0, "load_after": load(), "log": str(log_path)}
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(rec['cmd'])} exited with {proc.returncode}; log {log_path}:\n{tail(log_path)}")
    result = parse_child_result(log_path)
    if result is not None:
        rec["child"] = result
    return rec


# -- provenance --------------------------------------------------------------------------------------------------
def now() -> str:
    """UTC now, to the second (ISO 8601)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_state(path: Path) -> dict:
    """The commit of the repository holding ``path`` and whether its tracked files differ from it."""
    def git(*args):
        proc = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


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
