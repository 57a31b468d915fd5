"""The transition parser's default training (15 epochs, zhang-nivre-backoff, EWT) under several ``--move-hash-bits``:
peak RSS, time, selected dev epoch and dev/test UAS/LAS of each (a layout lever of issue 25: fewer move rows make
every weight vector smaller, but change the model).

Run by hand (never by the tests)::

    .venv/bin/python benchmarks/transition_move_bits.py --bits 22 21 [--jobs 2] [--workdir /tmp] \\
        [--out benchmarks/results/parsing_transition_move_bits]

Each setting is one fresh ``swvp train parser --kind transition`` process under ``/usr/bin/time -v`` (``--jobs``
of them at once: the peak RSS and the scores do not depend on it, the times do), then ``swvp evaluate`` of its
model on EWT dev and test. ``--parse-logs`` reads logs these commands already wrote (``<workdir>/r15_m<bits>.log``)
instead of running them again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ENTRY = "from swvp.cli.main import main; import sys; sys.exit(main())"


def run(bits: int, data: str, workdir: str) -> str:
    log = os.path.join(workdir, f"r15_m{bits}.log")
    model = os.path.join(workdir, f"m15_m{bits}.npz")
    with open(log, "w") as f:
        f.write(f"load before: {open('/proc/loadavg').read()}")
        f.flush()
        subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", ENTRY, "train", "parser", "--kind", "transition",
                        "--train", f"{data}/train.conllu.xz", "--dev", f"{data}/dev.conllu.xz", "--move-hash-bits",
                        str(bits), "--model", model, "--verbose"], stdout=f, stderr=subprocess.STDOUT, check=True)
        f.write(f"load after: {open('/proc/loadavg').read()}")
        f.flush()
        for split in ("dev", "test"):
            subprocess.run([sys.executable, "-c", ENTRY, "evaluate", "--model", model, f"{data}/{split}.conllu.xz"],
                           stdout=f, stderr=subprocess.STDOUT, check=True)
    return log


def parse(log: str) -> dict:
    text = open(log).read().replace("\r", "\n")

    def num(pattern):
        return float(re.search(pattern, text).group(1))

    epochs = [ln for ln in text.splitlines() if re.match(r"epoch \d+: ", ln)]
    scores = re.findall(r"(\S+\.conllu\.xz): .*\nwith punctuation \(every word\):\s+UAS ([0-9.]+)%\s+LAS ([0-9.]+)%",
                        text)
    out = {"epoch_seconds": [float(re.search(r"\(([0-9.]+)s\)", ln).group(1)) for ln in epochs],
           "dev_uas_by_epoch": [float(re.search(r"dev UAS ([0-9.]+)%", ln).group(1)) for ln in epochs],
           "best_epoch": int(num(r"best epoch (\d+)")),
           "wall_s": _clock(re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)),
           "cpu_s": num(r"User time \(seconds\): ([0-9.]+)") + num(r"System time \(seconds\): ([0-9.]+)"),
           "peak_rss_mb": num(r"Maximum resident set size \(kbytes\): (\d+)") / 1024,
           "load": re.findall(r"load (?:before|after): (.*)", text)}
    for path, uas, las in scores:
        split = "dev" if "dev" in os.path.basename(path) else "test"
        out[split] = {"uas": float(uas), "las": float(las)}
    out["cpu_per_epoch"] = out["cpu_s"] / max(1, len(epochs))
    out["wall_per_epoch"] = out["wall_s"] / max(1, len(epochs))
    return out


def _clock(s: str) -> float:
    parts = [float(p) for p in s.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bits", type=int, nargs="+", default=[22, 21])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--workdir", default="/tmp")
    ap.add_argument("--parse-logs", action="store_true")
    ap.add_argument("--out", default="benchmarks/results/parsing_transition_move_bits")
    a = ap.parse_args()
    from swvp.data.paths import data_path

    data = os.path.dirname(str(data_path("ud/en_ewt/train.conllu.xz")))
    if a.parse_logs:
        logs = [os.path.join(a.workdir, f"r15_m{b}.log") for b in a.bits]
    else:
        with ThreadPoolExecutor(a.jobs) as ex:
            logs = list(ex.map(lambda b: run(b, data, a.workdir), a.bits))
    res = {"command": " ".join(sys.argv), "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "runs": {str(b): parse(log) for b, log in zip(a.bits, logs)}}
    ref = res["runs"][str(a.bits[0])]
    res["delta_vs_first"] = {str(b): {split: {m: r[split][m] - ref[split][m] for m in ("uas", "las")}
                                      for split in ("dev", "test")} | {"peak_rss_ratio": r["peak_rss_mb"]
                                                                      / ref["peak_rss_mb"]}
                             for b, r in res["runs"].items()}
    with open(a.out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"# {res['command']} ({res['written']})"]
    for b, r in res["runs"].items():
        lines.append(f"move_hash_bits {b}: peak RSS {r['peak_rss_mb']:.0f} MB, {r['cpu_per_epoch']:.1f} s CPU / "
                     f"{r['wall_per_epoch']:.1f} s wall per epoch (whole process), best epoch {r['best_epoch']}, "
                     f"dev UAS {r['dev']['uas']:.2f} LAS {r['dev']['las']:.2f}, test UAS {r['test']['uas']:.2f} "
                     f"LAS {r['test']['las']:.2f}; load {r['load']}")
    lines.append("delta vs the first: " + json.dumps(res["delta_vs_first"]))
    with open(a.out + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
