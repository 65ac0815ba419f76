"""chat_small: ten GSM8K-style eval questions against a 30-conversation OpenAI-chat train file.

Demonstrates each field and level on a file small enough to read: two exact prompt+target
leaks (q2, q7), one prompt+target leak visible only after normalization (q5: case, spacing,
a zero-width space, ligatures and fullwidth digits), a prompt-only leak with another solution
of the same final answer (q9) and a target-only leak under a reworded question (q3). Every
train record opens with the same system message, which is not a leak. Text and plan:
vocab/chat_small.toml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import interleave, scatter, seeded, vocab, write_json, write_jsonl

NAME = "chat_small"


def make(out: Path) -> None:
    """Write ``out/chat_small/``: eval_questions.jsonl, train_chat.jsonl, expected.json."""
    v = vocab(NAME)
    placed = scatter(seeded(4), _planted(v), len(v["train"]) + len(v["planted"]))
    clean = [{"question": t["question"], "answer": t["answer"]} for t in v["train"]]
    train = interleave(placed, clean, len(clean) + len(placed))
    leaks = [{"eval_id": p["eval_id"], "train_row": row, "field": p["field"], "match": p["match"], "note": p["note"]}
             for row, p in placed.items()]
    leaks.sort(key=lambda x: int(str(x["eval_id"])[1:]))
    d = out / NAME
    write_jsonl(d / "eval_questions.jsonl", ({"id": e["id"], "question": e["question"], "answer": e["answer"]} for e in v["eval"]))
    write_jsonl(d / "train_chat.jsonl", (_chat(v["system"], t["question"], t["answer"]) for t in train))
    leaked = {x["eval_id"] for x in leaks}
    ex = v["expected"]
    write_json(d / "expected.json", {
        "eval_file": "eval_questions.jsonl", "train_file": "train_chat.jsonl",
        "fields": ex["fields"], "train_row": ex["train_row"], "normalization": ex["normalization"],
        "leaks": leaks, "not_leaked": [e["id"] for e in v["eval"] if e["id"] not in leaked], "notes": ex["notes"],
    })


def _planted(v: dict[str, Any]) -> list[dict[str, str]]:
    """The planted train records: the eval record's question and answer unless the plan rewords one."""
    ev = {e["id"]: e for e in v["eval"]}
    return [{**p, "question": p.get("question", ev[p["eval_id"]]["question"]),
             "answer": p.get("answer", ev[p["eval_id"]]["answer"])} for p in v["planted"]]


def _chat(system: str, question: str, answer: str) -> dict[str, list[dict[str, str]]]:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": question},
                         {"role": "assistant", "content": answer}]}
