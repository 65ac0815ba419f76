"""Yardstick ``floor``: the least per-line work leakcheck's exact and normalized levels must do.

Not a competitor: the part of a leakcheck scan that no faster code can remove while keeping
its guarantees. Every line is parsed (orjson, as leakcheck does: a bad line must be
reported, never skipped), the chat is read the way leakcheck reads it (every user turn
joined, the last assistant turn, blank and non-text turns refused), the id is read, and each
text gets the two tests of the two levels: its 128-bit xxh3 key looked up (``exact``) and
its first five lower-cased words looked up (the ``normalized`` level's first cut; nearly
every train text stops there). No records, no report, no error handling, no normalization:
the floor of leakcheck's Python path (orjson, then a dict per line). The C chat reader
(``leakcheck/_chatlines.c``) reads JSONL chats without that path, so a scan goes below it.

Usage: python floor_hash_levels.py TRAIN.jsonl EVAL.jsonl
Prints one line: records read and how many eval items an exact key matched.
"""

from __future__ import annotations

import sys

import orjson

from leakcheck.canon import normalize
from leakcheck.detect.hashing import word_text
from leakcheck.fingerprint import text_key
from leakcheck.formats import _chat_texts


def main(train_path: str, eval_path: str) -> None:
    keys: dict[int, int] = {}
    words: set[str] = set()
    with open(eval_path, "rb") as fh:
        for i, line in enumerate(fh):
            row = orjson.loads(line)
            for text in (row["question"], row["answer"]):
                keys.setdefault(text_key(text), i)
                words.add(word_text(normalize(text)))
    flagged: set[int] = set()
    n = word_hits = 0
    loads = orjson.loads
    with open(train_path, "rb") as fh:
        readline = fh.readline
        while line := readline(1 << 30):
            row = loads(line)
            texts = _chat_texts(row.get("messages"))
            if texts is None:
                sys.exit(f"floor: line {n + 1} is not a plain chat")
            row.get("id")
            n += 1
            for text in texts:
                if text is None:
                    continue
                k = text_key(text)
                if k in keys:
                    flagged.add(keys[k])
                if text.isascii() and word_text(text) in words:
                    word_hits += 1
    print(f"floor: {n} train records, {len(flagged)} eval items flagged (exact key), {word_hits} texts past the word test")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: floor_hash_levels.py TRAIN.jsonl EVAL.jsonl")
    main(sys.argv[1], sys.argv[2])
