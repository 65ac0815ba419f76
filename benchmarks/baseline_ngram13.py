"""Yardstick ``ngram13``: an lm-eval-harness style 13-gram overlap check, pure Python, one field.

Like the harness's decontamination step: text is lowercased, punctuation is dropped,
words are split on whitespace, and an eval item is flagged when any of its word 13-grams
occurs in a train record. Only the prompt is checked (eval ``question`` against the train
record's user-turn content); items shorter than 13 words cannot be flagged.

Usage: python baseline_ngram13.py TRAIN.jsonl EVAL.jsonl [--n 13]
Prints one line: records read and how many eval items were flagged.
"""

from __future__ import annotations

import argparse
import json
import string

_PUNCT = str.maketrans("", "", string.punctuation)


def words(text: str) -> list[str]:
    return text.lower().translate(_PUNCT).split()


def ngrams(ws: list[str], n: int):
    for i in range(len(ws) - n + 1):
        yield " ".join(ws[i : i + n])


def user_content(row: dict) -> str:
    return "\n".join(m["content"] for m in row["messages"] if m["role"] == "user")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("eval")
    ap.add_argument("--n", type=int, default=13)
    a = ap.parse_args()

    index: dict[str, list[int]] = {}
    with open(a.eval, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            for g in set(ngrams(words(json.loads(line)["question"]), a.n)):
                index.setdefault(g, []).append(i)

    flagged: set[int] = set()
    n = 0
    with open(a.train, encoding="utf-8") as fh:
        for line in fh:
            n += 1
            for g in ngrams(words(user_content(json.loads(line))), a.n):
                hit = index.get(g)
                if hit:
                    flagged.update(hit)
    print(f"ngram{a.n}: {n} train records, {len(flagged)} eval items flagged ({len(index)} eval {a.n}-grams)")


if __name__ == "__main__":
    main()
