"""What reading a CoNLL-U file leaves behind once its sentences are freed (session 11): RSS of a fresh process
after the CLI's imports, after reading EWT train, and after freeing the sentences (``gc.collect()``), with the
reader as it is and with the ``functools.lru_cache`` memoisation of the rare IDs and HEADs it had before b7c5832
put back; plus the objects that survive the read (``tracemalloc``) and Python's arenas still allocated
(``sys._debugmallocstats``). Run by hand (never by the tests)::

    .venv/bin/python benchmarks/reader_memory.py [--rounds 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import _harness as H

CHILD = r"""
import functools, gc, json, sys, tracemalloc
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
import swvp.cli.main  # noqa: F401  (the CLI's own imports)
import swvp.data.conllu as C
if sys.argv[2] == "lru_cache":  # the reader before b7c5832: the rare IDs and HEADs memoised
    C.parse_id_value = functools.lru_cache(maxsize=8192)(C.parse_id_value)
    C.parse_int_value = functools.lru_cache(maxsize=8192)(C.parse_int_value)
out = {"imports_mb": rss()}
gc.collect()
if sys.argv[3] == "survivors":  # a second process: tracemalloc's own tables would blur the RSS figures
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
sentences = C.read_conllu(sys.argv[1])
out["read_mb"] = rss()
out["sentences"] = len(sentences)
del sentences
gc.collect()
if sys.argv[3] == "survivors":
    grown = [d for d in tracemalloc.take_snapshot().compare_to(before, "filename") if d.size_diff > 0]
    print(json.dumps({"surviving_objects": sum(d.count_diff for d in grown),
                      "surviving_bytes": sum(d.size_diff for d in grown)}))
    raise SystemExit(0)
out["freed_mb"] = rss()
print(json.dumps(out), flush=True)
sys._debugmallocstats()  # to the C stream stderr: the arenas still allocated
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from swvp.data.paths import data_path

    train = str(data_path("ud/en_ewt/train.conllu.xz"))
    m = H.meta(rounds=a.rounds, file="ud/en_ewt/train.conllu.xz")
    runs: dict[str, list[dict]] = {"as is": [], "lru_cache": []}
    for r in range(a.rounds):
        for variant in runs:
            proc = subprocess.run([sys.executable, "-c", CHILD, train, variant, "rss"], capture_output=True,
                                  text=True, check=True)
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            for key, label in (("arenas_allocated", "# arenas allocated current"),
                               ("bytes_in_allocated_blocks", "# bytes in allocated blocks")):
                row[key] = int(re.search(re.escape(label) + r"\s*=\s*([\d,]+)", proc.stderr).group(1).replace(",", ""))
            proc = subprocess.run([sys.executable, "-c", CHILD, train, variant, "survivors"], capture_output=True,
                                  text=True, check=True)
            row.update(json.loads(proc.stdout.strip().splitlines()[-1]))
            runs[variant].append(row)
            H.log(f"round {r + 1} {variant}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                                                             for k, v in row.items()))
    H.write_json(H.out_path(a.out, "reader_memory"), {**m, "load_end": H.load(), "runs": runs})
    for variant, rows in runs.items():
        best = min(rows, key=lambda x: x["freed_mb"])
        print(f"{variant:10s} imports {best['imports_mb']:.0f} MB, read {best['read_mb']:.0f} MB, freed "
              f"{best['freed_mb']:.0f} MB; {best['surviving_objects']} objects ({best['surviving_bytes']} B) survive; "
              f"{best['arenas_allocated']} arenas hold {best['bytes_in_allocated_blocks']:,} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
