"""Yardstick ``hash``: the least work any exact-match scan of a chat train set must do.

Reads each train line, ``json.loads`` it, and hashes its prompt (the user-turn content)
and its target (the assistant content) with xxhash's xxh3_64. The eval side is hashed
the same way into two sets and every train hash is looked up, so the loop also answers
the exact-match question (on raw text, without normalization, cross-field checks or a
report). This is the floor leakcheck is measured against.

Usage: python baseline_hash_loop.py TRAIN.jsonl EVAL.jsonl
Prints one line: records read and how many eval items an exact hash matched.
"""

from __future__ import annotations

import json
import sys

import xxhash


def chat_fields(row: dict) -> tuple[str, str]:
    """(user content, assistant content) of an OpenAI-messages row."""
    prompt = target = ""
    for m in row["messages"]:
        if m["role"] == "user":
            prompt = m["content"]
        elif m["role"] == "assistant":
            target = m["content"]
    return prompt, target


def main(train_path: str, eval_path: str) -> None:
    h = xxhash.xxh3_64_intdigest
    eval_prompts: dict[int, int] = {}
    eval_targets: dict[int, int] = {}
    with open(eval_path, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            row = json.loads(line)
            eval_prompts.setdefault(h(row["question"].encode()), i)
            eval_targets.setdefault(h(row["answer"].encode()), i)

    flagged: set[int] = set()
    n = 0
    with open(train_path, encoding="utf-8") as fh:
        for line in fh:
            prompt, target = chat_fields(json.loads(line))
            n += 1
            hp = h(prompt.encode())
            ht = h(target.encode())
            if hp in eval_prompts:
                flagged.add(eval_prompts[hp])
            if ht in eval_targets:
                flagged.add(eval_targets[ht])
    print(f"hash: {n} train records, {len(flagged)} eval items flagged (exact prompt or target hash)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: baseline_hash_loop.py TRAIN.jsonl EVAL.jsonl")
    main(sys.argv[1], sys.argv[2])
