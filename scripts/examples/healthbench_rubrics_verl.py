"""healthbench_rubrics_verl: the healthbench_rubrics records in a verl-rubric parquet layout.

Demonstrates the same planted leaks and decoys as healthbench_rubrics (same records, same
rows) read from verl columns: ``prompt`` a list of messages, ``reward_model`` a struct
``{style: "rubric", rubrics: [{criterion, points, tags: {level, axis}}]}`` (the cluster:*
tag is dropped) and ``extra_info`` ``{prompt_id, index}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from . import MESSAGE, vocab, write_json, write_parquet
from .healthbench_rubrics import Record, build, summary

NAME = "healthbench_rubrics_verl"

RUBRIC = pa.struct([("criterion", pa.string()), ("points", pa.int64()),
                    ("tags", pa.struct([("level", pa.string()), ("axis", pa.string())]))])
SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(MESSAGE)),
    ("reward_model", pa.struct([("style", pa.string()), ("rubrics", pa.list_(RUBRIC))])),
    ("extra_info", pa.struct([("prompt_id", pa.string()), ("index", pa.int64())])),
])


def make(out: Path) -> None:
    """Write ``out/healthbench_rubrics_verl/``: train.parquet, eval.parquet, expected_leaks.json."""
    b = build()
    d = out / NAME
    write_parquet(d / "train.parquet", columns(b.train), SCHEMA)
    write_parquet(d / "eval.parquet", columns(b.eval), SCHEMA)
    notes = b.notes | {"verl_variant": vocab("healthbench")["verl"]["note"]}
    write_json(d / "expected_leaks.json", summary(b, "0-based row numbers in eval.parquet / train.parquet (= extra_info.index)", notes))


def columns(recs: list[Record]) -> dict[str, list[Any]]:
    """The verl columns of the records, in order."""
    return {
        "data_source": ["healthbench"] * len(recs),
        "prompt": [r["prompt"] for r in recs],
        "reward_model": [{"style": "rubric", "rubrics": [_rubric(c) for c in r["rubrics"]]} for r in recs],
        "extra_info": [{"prompt_id": r["prompt_id"], "index": i} for i, r in enumerate(recs)],
    }


def _rubric(c: Record) -> dict[str, Any]:
    """A criterion with its ``level:`` and ``axis:`` tags as a struct.

    >>> _rubric({"criterion": "x", "points": 3, "tags": ["level:cluster", "cluster:c", "axis:a"]})
    {'criterion': 'x', 'points': 3, 'tags': {'level': 'cluster', 'axis': 'a'}}
    """
    tags = dict(t.split(":", 1) for t in c["tags"])
    return {"criterion": c["criterion"], "points": c["points"], "tags": {"level": tags["level"], "axis": tags["axis"]}}
