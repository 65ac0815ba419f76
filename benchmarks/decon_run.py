"""Run allenai's decon once and say what it flagged; bench_decon.py times this script.

Runs under the Python that has the ``decontaminate`` wheel (benchmarks/.decon-venv, Python
3.12+), not the leakcheck venv. Reading decon's report files afterwards is part of the
timed run, as leakcheck's JSON report is part of its.

    benchmarks/.decon-venv/bin/python benchmarks/decon_run.py TRAIN_DIR EVALS_DIR OUT_DIR [--threads N] [--flagged FILE]

Prints a last line "decon: N eval items flagged (M matches, K training docs)"; with
--flagged, also writes the flagged (eval_key, eval_instance_index) pairs there as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def flagged(report_dir: Path) -> tuple[set[tuple[str, int]], int, int]:
    """(eval items, matches, training docs) in a decon report folder."""
    items: set[tuple[str, int]] = set()
    docs: set[tuple[str, int]] = set()
    matches = 0
    for path in sorted(report_dir.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    r = json.loads(line)
                    matches += 1
                    items.add((r["eval_key"], int(r["eval_instance_index"])))
                    docs.add((r["training_file"], int(r["training_line"])))
    return items, matches, len(docs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train_dir", type=Path)
    ap.add_argument("evals_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--threads", type=int, help="decon worker_threads (default: decon's own choice)")
    ap.add_argument("--flagged", type=Path, help="write the flagged eval items here as JSON")
    a = ap.parse_args()
    import decon

    cfg = decon.Config(training_dir=str(a.train_dir), evals_dir=str(a.evals_dir), report_output_dir=str(a.out_dir),
                       worker_threads=a.threads)
    decon.detect(cfg)
    items, matches, docs = flagged(a.out_dir)
    if a.flagged:
        a.flagged.write_text(json.dumps(sorted(items)) + "\n")
    print(f"decon {decon.__version__}: {len(items)} eval items flagged ({matches} matches, {docs} training docs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
