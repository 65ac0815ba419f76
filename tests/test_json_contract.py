"""The JSON report is a contract later issues and users' CI read: pin its shape."""

from __future__ import annotations

import json

import leakcheck
from leakcheck.fingerprint import record_fingerprint
from leakcheck.report.json import dumps, to_dict

from .conftest import write_jsonl

Q = "A farmer has 17 sheep and all but 9 run away. How many sheep are left on the farm?"
A = "All but 9 run away, so 9 sheep are left on the farm.\n#### 9"


def _scan(tmp_path):
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"question": Q, "answer": A}, {"question": "Unique eval question here?", "answer": "42"}])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"messages": [{"role": "user", "content": Q}, {"role": "assistant", "content": A}]}, {"text": "x"} if False else {"messages": [{"role": "user", "content": "other"}, {"role": "assistant", "content": "42"}]}])
    return leakcheck.scan(tr, ev, leakcheck.ScanConfig(levels=("exact", "normalized")))


def test_report_shape(tmp_path):
    d = to_dict(_scan(tmp_path))
    assert list(d) == ["schema_version", "leakcheck_version", "created_at", "train", "eval", "levels", "parameters",
                       "summary", "gate", "notes", "findings", "chance_target_matches", "eval_duplicates", "near_misses", "siblings"]
    assert d["schema_version"] == 2 and d["leakcheck_version"] == leakcheck.__version__
    assert d["eval"]["format"] == "gsm8k" and d["train"]["format"] == "openai-messages"
    assert d["eval"]["records"] == 2 and d["train"]["records"] == 2
    assert d["summary"]["contaminated"] == {"count": 1, "percent": 50.0}
    assert d["summary"]["by_kind"]["pair"] == {"count": 1, "percent": 50.0, "levels": {"exact": {"count": 1, "percent": 50.0}}}
    assert d["summary"]["chance_target_matches"] == {"count": 1, "percent": 50.0}
    assert d["gate"] == {"fail_on": leakcheck.Policy().describe(), "policy": leakcheck.Policy().spec(), "gated_findings": 1, "exit_code": 1}
    assert leakcheck.Policy.parse(d["gate"]["policy"]) == leakcheck.Policy()
    (f,) = d["findings"]
    assert {k: f[k] for k in ("eval_id", "train_id", "kind", "level", "score", "eval_index", "train_index", "eval_field", "train_field")} == {
        "eval_id": "0", "train_id": "0", "kind": "pair", "level": "exact", "score": 1.0,
        "eval_index": 0, "train_index": 0, "eval_field": "question", "train_field": "messages"}
    assert f["eval_snippet"].startswith("A farmer has 17 sheep") and f["train_snippet"] == f["eval_snippet"]
    # content fingerprints name both records whatever their rows; the train record's file and 1-based line locate it
    assert f["eval_fingerprint"] == f["train_fingerprint"] == record_fingerprint(Q, A)
    assert (f["train_file"], f["train_line"], f["eval_set"]) == (str(tmp_path / "train.jsonl"), 1, "eval")
    assert d["chance_target_matches"] == [{"eval_id": "1", "eval_index": 1, "target": "42", "reason": "short", "level": "exact", "train_matches": 1,
                                           "examples": ["1"], "eval_set": "eval"}]


def test_same_inputs_same_bytes_apart_from_timestamp(tmp_path):
    a, b = _scan(tmp_path), _scan(tmp_path)
    strip = lambda s: "\n".join(line for line in s.splitlines() if '"created_at"' not in line)  # noqa: E731
    assert strip(dumps(a)) == strip(dumps(b))
    assert json.loads(dumps(a))["created_at"].endswith("+00:00")
