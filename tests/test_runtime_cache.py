"""numba's reference-counting runtime set up from a cache file (swvp._runtime_cache): a process finds the library
a former one compiled and runs no LLVM compile for it; compiled code links against it as against numba's own; a
damaged, foreign or truncated file is compiled over, never run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swvp import _runtime_cache as rc

# Each child sets the runtime up in a fresh process (it is set up once per process) with the cache in NUMBA_CACHE_DIR,
# then compiles and runs a kernel that allocates arrays and lists (reference counting through the runtime).
CHILD = r"""
import json, sys
import numba
import numpy as np
from numba.core.registry import cpu_target
from numba.core.runtime import nrtdynmod, rtsys
from swvp import _runtime_cache as rc
from swvp._kernel_cache import runtime_folders

compiled = []
real_compile = rc._compile
rc._compile = lambda ctx: compiled.append(1) or real_compile(ctx)
if sys.argv[1] == "forbid":  # a warm cache: no compile of the runtime at all, numba's included
    def refuse(*args):
        raise AssertionError("the runtime was compiled")
    rc._compile = nrtdynmod.compile_nrt_functions = refuse
rc.initialize(cpu_target.target_context, runtime_folders())
assert rtsys._init


@numba.njit
def kernel(n):
    a = np.arange(n) * 2
    parts = [a, a + 1, a[::-1].copy()]
    return sum([p.sum() for p in parts]), parts[2][:3]


total, head = kernel(10)
print(json.dumps({"compiled": len(compiled), "library": rtsys.library.name, "total": int(total),
                  "head": head.tolist()}))
"""


def _child(cache: Path, mode: str = "") -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _files(cache: Path) -> list[Path]:
    return sorted((cache / "swvp").glob(f"{rc.CACHE_NAME}.*.bin"))


EXPECTED = {"total": 90 + 100 + 90, "head": [18, 16, 14]}


def test_a_second_process_loads_the_runtime_a_first_one_compiled(tmp_path):
    first = _child(tmp_path)
    assert first["compiled"] == 1 and len(_files(tmp_path)) == 1
    second = _child(tmp_path, "forbid")  # compiling it would raise
    assert second["compiled"] == 0 and second["library"] == rc.CACHE_NAME
    for out in (first, second):
        assert {k: out[k] for k in EXPECTED} == EXPECTED
    assert len(_files(tmp_path)) == 1


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign"])
def test_a_damaged_file_is_compiled_over(tmp_path, damage):
    _child(tmp_path)
    (path,) = _files(tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        data = data[:len(data) - 100]
    else:  # whole and well formed, but another format's
        data = b"swvp-nrt-library 0\n" + data[len(b"swvp-nrt-library 1\n"):]
    path.write_bytes(bytes(data))
    out = _child(tmp_path)
    assert out["compiled"] == 1 and {k: out[k] for k in EXPECTED} == EXPECTED
    assert rc._unpack(path.read_bytes()) is not None  # rewritten whole
    assert _child(tmp_path, "forbid")["compiled"] == 0


def test_file_contents_are_checked_before_use():
    obj, bitcode = b"\x7fELF object code", b"BC\xc0\xde bitcode"
    data = rc._pack(obj, bitcode)
    assert rc._unpack(data) == (obj, bitcode)
    for bad in (data[:-1], data + b"x", data[:20], b"", b"x" + data[1:],
                data[:len(data) - len(obj + bitcode) - 8] + (999).to_bytes(8, "little") + obj + bitcode):
        assert rc._unpack(bad) is None


class _Codegen:
    def __init__(self, machine):
        self.machine = machine

    def magic_tuple(self):
        return self.machine


class _Context:
    def __init__(self, machine):
        self._codegen = _Codegen(machine)

    def codegen(self):
        return self._codegen


def test_the_file_name_follows_the_machine_and_the_code():
    here = ("x86_64-unknown-linux-gnu", "znver3", "+avx2,+sse4.2")
    name = rc.cache_file(_Context(here), Path("c"), "define i32 @f()").name
    assert name.startswith(rc.CACHE_NAME + ".") and name == rc.cache_file(_Context(here), Path("c"),
                                                                          "define i32 @f()").name
    assert rc.cache_file(_Context((*here[:2], "+avx2")), Path("c"), "define i32 @f()").name != name
    assert rc.cache_file(_Context((here[0], "skylake", here[2])), Path("c"), "define i32 @f()").name != name
    assert rc.cache_file(_Context(here), Path("c"), "define i64 @f()").name != name
