"""Yardstick ``datasketch``: a plain datasketch MinHash + MinHashLSH near-duplicate check.

The eval questions go into a ``MinHashLSH`` index (128 permutations, Jaccard threshold
0.6 on word 5-gram shingles, the same defaults as leakcheck's ``near`` level); then each
train record's user-turn content gets its own ``MinHash``, one record at a time, and is
queried against the index. Only the prompt is checked. This is what a careful user writes
by hand with datasketch, without batching or numpy tricks.

Usage: python baseline_datasketch.py TRAIN.jsonl EVAL.jsonl [--threshold 0.6] [--shingle 5] [--num-perm 128]
Prints one line: records read and how many eval items were flagged.
"""

from __future__ import annotations

import argparse
import json

from datasketch import MinHash, MinHashLSH


def shingles(text: str, k: int) -> set[bytes]:
    ws = text.lower().split()
    if len(ws) < k:
        return {" ".join(ws).encode("utf-8")}
    return {" ".join(ws[i : i + k]).encode("utf-8") for i in range(len(ws) - k + 1)}


def minhash(text: str, k: int, num_perm: int) -> MinHash:
    m = MinHash(num_perm=num_perm, seed=1)
    m.update_batch(list(shingles(text, k)))
    return m


def user_content(row: dict) -> str:
    return "\n".join(m["content"] for m in row["messages"] if m["role"] == "user")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("eval")
    ap.add_argument("--threshold", type=float, default=0.6)
    ap.add_argument("--shingle", type=int, default=5)
    ap.add_argument("--num-perm", type=int, default=128)
    a = ap.parse_args()

    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm)
    with open(a.eval, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            lsh.insert(str(i), minhash(json.loads(line)["question"], a.shingle, a.num_perm))

    flagged: set[str] = set()
    n = 0
    with open(a.train, encoding="utf-8") as fh:
        for line in fh:
            n += 1
            flagged.update(lsh.query(minhash(user_content(json.loads(line)), a.shingle, a.num_perm)))
    print(f"datasketch: {n} train records, {len(flagged)} eval items flagged "
          f"(MinHashLSH, {a.num_perm} perms, threshold {a.threshold}, {a.shingle}-word shingles)")


if __name__ == "__main__":
    main()
