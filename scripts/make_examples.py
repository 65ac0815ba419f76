#!/usr/bin/env python3
"""Regenerate the bundled example datasets in leakcheck/data/ (all, or the NAMEs given).

Usage:
    python scripts/make_examples.py                      # every example
    python scripts/make_examples.py chat_small           # only these
    python scripts/make_examples.py --out DIR [NAME...]  # write somewhere else

One generator a folder, in scripts/examples/<name>.py, with its words and templates in
scripts/examples/vocab/; every choice comes from a fixed seed, so rerunning gives
byte-identical files. All text is synthetic; only the schemas mirror the real data.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

#: Example folders, in the order they are generated.
NAMES = ("collabllm_medium", "healthbench_rubrics", "healthbench_rubrics_verl", "chat_small")


def main(argv: list[str] | None = None) -> int:
    """Write the examples; an unknown NAME is a usage error (exit 2)."""
    ap = argparse.ArgumentParser(prog="make_examples.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="example folders to write: " + ", ".join(NAMES) + " (default: all)")
    ap.add_argument("--out", type=Path, default=HERE.parent / "leakcheck" / "data", help="output folder (default: leakcheck/data)")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        ap.error(f"unknown example {unknown[0]!r}; choose from {', '.join(NAMES)}")
    out = args.out.resolve()
    for name in args.names or NAMES:
        importlib.import_module(f"examples.{name}").make(out)
        size = sum(f.stat().st_size for f in (out / name).iterdir() if f.is_file())
        print(f"wrote {out / name} ({size / 1024:.1f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
