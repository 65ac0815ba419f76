"""Issue 4: messy files give one clear error line, or a documented and counted handling."""

from __future__ import annotations

import builtins
import csv
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck import InputError, ScanConfig
from leakcheck.cli import main

from .conftest import write_jsonl

EX = ScanConfig(levels=("exact", "normalized"))
SKIP = ScanConfig(levels=("exact", "normalized"), on_error="skip")
Q = "Which planet is known as the red planet, and why does it look red?"
A = "Mars looks red because iron oxide (rust) covers its surface dust and rocks."


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "eval.jsonl", [{"question": Q, "answer": A}])


def cli(*args) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["scan", *map(str, args), "--levels", "exact,normalized"])
    assert "Traceback" not in r.output
    return r.exit_code, r.output


def error_of(train: Path, ev: Path, cfg: ScanConfig = EX) -> str:
    with pytest.raises(InputError) as ei:
        leakcheck.scan(train, ev, cfg)
    return str(ei.value)


GOOD = json.dumps({"question": "q1 unique", "answer": "a1 unique and long enough"})


def test_malformed_line_in_the_middle(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_text(GOOD + "\n" + '{"question": "x" "answer": "y"}\n' + GOOD + "\n")
    assert error_of(p, ev) == f"{p}: line 2: invalid JSON (unexpected character, expected ',' or '}}' at column 18); fix or remove the line, or pass --on-error skip"
    r = leakcheck.scan(p, ev, SKIP)
    assert (r.train.rows, r.train.records, r.train.skipped) == (3, 2, {"invalid_json": 1})
    assert [(s.where, s.reason) for s in r.train.skipped_rows] == [("line 2", "invalid_json")]


def test_truncated_last_line(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_text(GOOD + "\n" + GOOD[:20])
    assert error_of(p, ev) == (f"{p}: line 2: the last line is cut off (no closing brace/newline); "
                               "the file was truncated while writing: regenerate it or delete the last line, or pass --on-error skip")


def test_truncated_gzip(tmp_path, ev):
    p = tmp_path / "t.jsonl.gz"
    data = gzip.compress(("\n".join([GOOD] * 2000) + "\n").encode())
    p.write_bytes(data[: len(data) // 2])
    msg = error_of(p, ev)
    assert msg.startswith(f"{p}: after line ") and "compressed data is truncated or corrupt" in msg and msg.endswith("(gzip -t tests it)")
    # --on-error skip cannot make rows after the cut appear: still an error
    assert error_of(p, ev, SKIP) == msg


def test_gz_name_on_a_plain_file(tmp_path, ev):
    p = tmp_path / "t.jsonl.gz"
    p.write_text(GOOD + "\n")
    assert error_of(p, ev) == f"{p}: is not gzip-compressed although its name ends in .gz; rename it without .gz or compress it with gzip"


def test_report_folder_missing_is_caught_before_the_scan(tmp_path, ev):
    code, out = cli(ev, ev, "--json", tmp_path / "nope" / "r.json")
    assert code == 2 and out == f"leakcheck: error: {tmp_path / 'nope' / 'r.json'}: the folder {tmp_path / 'nope'} does not exist; create it first\n"


def test_invalid_utf8_bom_and_crlf(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'\xef\xbb\xbf' + GOOD.encode() + b"\r\n" + b'{"question": "caf\xe9", "answer": "x"}\r\n' + json.dumps({"question": Q, "answer": A}).encode() + b"\r\n")
    assert error_of(p, ev) == f"{p}: line 2: invalid UTF-8 byte 0xe9 at column 18; re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or pass --on-error skip"
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.skipped == {"invalid_utf8": 1} and r.train.records == 2
    assert [(f.train_id, f.kind) for f in r.findings] == [("2", "pair")]


def test_json_array_in_a_jsonl_file(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps([{"question": "zz", "answer": "unrelated answer text"}, {"question": Q, "answer": A}], indent=2))
    r = leakcheck.scan(p, ev, EX)
    assert r.train.records == 2 and [f.train_id for f in r.findings] == ["1"]


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_or_blank_file_is_an_error(tmp_path, ev, content):
    p = tmp_path / "t.jsonl"
    p.write_text(content)
    assert error_of(p, ev) == f"{p}: the train input has no records (empty or blank lines only); check the path; a gate must not pass data it did not see"
    code, out = cli(p, ev)
    assert code == 2 and out.startswith("leakcheck: error: ")


def test_folder_without_data_files_and_missing_path(tmp_path, ev):
    d = tmp_path / "empty"
    d.mkdir()
    (d / "notes.txt").write_text("hi")
    assert error_of(d, ev).startswith(f"{d}: the folder holds no data files; data files end in .jsonl")
    assert error_of(tmp_path / "missing.jsonl", ev) == f"{tmp_path / 'missing.jsonl'}: no such file or folder; check the path"


def test_unreadable_file(tmp_path, ev, monkeypatch):
    p = write_jsonl(tmp_path / "t.jsonl", [{"question": "q", "answer": "a"}])
    real_open = builtins.open

    def deny(file, *a, **k):  # root may read anything, so simulate the OS saying no
        if str(file) == str(p):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", deny)
    assert error_of(p, ev) == f"{p}: permission denied; make the file readable (chmod +r)"


@pytest.mark.parametrize(
    "row, reason, message",
    [
        ({"question": None, "answer": "x"}, "not_text", "prompt is null, not text (format gsm8k, detected from lines 1-2)"),
        ({"question": {"text": "q"}, "answer": "x"}, "not_text", "prompt is an object with keys text, not text (format gsm8k, detected from lines 1-2)"),
        ({"question": "   ", "answer": "x"}, "empty_text", "prompt is empty"),
        ({"question": [1, 2], "answer": "x"}, "not_text", "prompt is a list, not text (format gsm8k, detected from lines 1-2)"),
    ],
)
def test_bad_field_values(tmp_path, ev, row, reason, message):
    p = write_jsonl(tmp_path / "t.jsonl", [{"question": "fine", "answer": "fine answer here"}, row])
    assert error_of(p, ev).startswith(f"{p}: line 2: {message}; ")
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.skipped == {reason: 1} and r.train.records + 1 == r.train.rows == 2


def test_numbers_are_text_and_lists_of_strings_are_joined(tmp_path):
    ev = write_jsonl(tmp_path / "e.jsonl", [{"question": "What is six times seven, exactly?", "answer": 42}])
    tr = write_jsonl(tmp_path / "t.jsonl", [{"question": ["What is six times seven,", "exactly?"], "answer": "42"}, {"question": "What is six times seven, exactly?", "answer": 42}])
    r = leakcheck.scan(tr, ev, EX)
    # the joined list differs from the eval text only in whitespace: a normalized match
    assert {(f.train_id, f.kind, f.level) for f in r.findings} == {("0", "prompt", "normalized"), ("1", "prompt", "exact")}
    # 42 (a number) and "42" (text) are the same target; too short to be more than a chance match
    assert [(c.target, c.train_matches) for c in r.chance] == [("42", 2)]


def test_chat_without_user_turn(tmp_path, ev):
    p = write_jsonl(tmp_path / "t.jsonl", [
        {"messages": [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello, how can I help"}]},
        {"messages": [{"role": "system", "content": "sys"}, {"role": "assistant", "content": "hello"}]},
    ])
    assert error_of(p, ev).startswith(f"{p}: line 2: chat has no user turn (roles: assistant, system); check the role names")


def test_a_role_that_is_a_list_is_no_role(tmp_path, ev):
    # found by tests/test_chat_lines.py: it used to be an internal error (an unhashable role looked up)
    p = write_jsonl(tmp_path / "t.jsonl", [
        {"messages": [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello, how can I help"}]},
        {"messages": [{"role": ["user"], "content": "hi"}, {"role": {"name": "assistant"}, "content": "yo"}]},
    ])
    assert error_of(p, ev).startswith(f"{p}: line 2: chat has no user turn (roles: None); check the role names")


def test_mixed_schemas_skip_counts_add_up(tmp_path, ev):
    rows = [{"question": f"q{i} text", "answer": f"answer number {i} text"} for i in range(5)] + [{"text": "other schema"}] * 3
    p = write_jsonl(tmp_path / "t.jsonl", rows)
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.rows == 8 and r.train.records == 5 and r.train.skipped == {"missing_field": 3}
    assert r.summary()["skipped_rows"] == {"train": {"count": 3, "by_reason": {"missing_field": 3}}, "eval": {"count": 0, "by_reason": {}}}
    from leakcheck.report.json import to_dict

    listed = to_dict(r)["train"]["skipped_rows"]
    assert [(x["where"], x["reason"]) for x in listed] == [("line 6", "missing_field"), ("line 7", "missing_field"), ("line 8", "missing_field")]
    code, out = cli(p, ev, "--on-error", "skip")
    assert code == 3 and "skipped in" in out and "PARTIAL SCAN" in out
    assert cli(p, ev, "--on-error", "skip", "--allow-partial")[0] == 0


def test_every_row_skipped_is_an_error(tmp_path, ev):
    p = write_jsonl(tmp_path / "t.jsonl", [{"foo": "q"}, {"bar": "r"}])
    assert error_of(p, ev, SKIP).startswith(f"{p}: all 2 rows of the train input were skipped (unknown_format: 2)")


def test_one_50mb_line_and_10000_messages(tmp_path, ev):
    big = "word " * 10_000_000
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(10_000)]
    p = write_jsonl(tmp_path / "t.jsonl", [{"messages": [{"role": "user", "content": big}, {"role": "assistant", "content": "ok then"}]}, {"messages": msgs}])
    assert p.stat().st_size > 50_000_000
    r = leakcheck.scan(p, ev, EX)
    assert r.train.records == 2 and r.findings == ()


def test_a_million_tiny_records(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    with open(p, "w") as fh:
        fh.writelines(f'{{"text": "t{i}"}}\n' for i in range(1_000_000))
    fh = open(p, "a")
    fh.write(json.dumps({"text": Q}) + "\n")
    fh.close()
    r = leakcheck.scan(p, ev, EX)
    assert r.train.records == r.train.rows == 1_000_001
    assert [(f.train_id, f.kind) for f in r.findings] == [("1000000", "prompt")]


def test_parquet_unknown_schema_and_json_string_column(tmp_path, ev):
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"foo": [1, 2], "bar": ["x", "y"]}), p)
    assert error_of(p, ev) == (f"{p}: row 1: cannot tell the format from the records' fields (bar, foo); pass --prompt-field "
                               "(and --target-field) with dotted paths, e.g. --prompt-field messages[0].content, or pass --on-error skip")
    p2 = tmp_path / "t2.parquet"
    pq.write_table(pa.table({"prompt": [json.dumps([{"role": "user", "content": Q}])],
                             "reward_model": [json.dumps({"style": "rule", "ground_truth": A})]}), p2)
    r = leakcheck.scan(p2, ev, EX)
    assert r.train.format == "verl" and [(f.kind, f.level) for f in r.findings] == [("pair", "exact")]


def test_csv_with_embedded_newlines_and_quotes(tmp_path):
    q = 'He said "stop",\nthen left. Where did he go after that?'
    p = tmp_path / "t.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer"])
        w.writerow(["plain, one", "two words here"])
        w.writerow([q, 'To the "store", then home again, late at night.'])
    ev = write_jsonl(tmp_path / "e.jsonl", [{"question": q, "answer": "unrelated but long answer text"}])
    r = leakcheck.scan(p, ev, EX)
    assert r.train.records == 2 and [(f.train_id, f.kind) for f in r.findings] == [("1", "prompt")]


def test_same_file_as_train_and_eval(tmp_path):
    p = write_jsonl(tmp_path / "d.jsonl", [{"question": Q, "answer": A}, {"question": "Second question text?", "answer": "Second answer, long enough to count."}])
    r = leakcheck.scan(p, p, EX)
    assert r.notes == ("train and eval are the same file: every record matches itself",)
    assert len(r.findings) == 2
    code, out = cli(p, p)
    assert code == 1 and "note: train and eval are the same file" in out


def test_headerless_csv_columns_are_numbered(tmp_path):
    """MMLU's CSVs have no header: columns are named 0, 1, 2, ... and can be passed as fields."""
    p = tmp_path / "mmlu.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Find the degree of the extension Q(sqrt(2)) over Q.", "0", "4", "2", "6", "C"])
        w.writerow(["Which of the following is a group under addition?", "N", "Z", "the odd integers", "none", "B"])
    ev = write_jsonl(tmp_path / "e.jsonl", [{"question": "Which of the following is a group under addition?", "answer": "Z"}])
    msg = error_of(p, ev)
    assert msg.startswith(f"{p}: line 1: cannot tell the format from the records' fields (0, 1, 2, 3, 4, 5); pass --prompt-field")
    r = leakcheck.scan(p, ev, EX.with_(train_fields=leakcheck.Fields(prompt="0", target="5")))
    assert r.train.records == 2 and [(f.train_id, f.kind) for f in r.findings] == [("1", "prompt")]


def test_csv_row_with_extra_columns(tmp_path, ev):
    p = tmp_path / "t.csv"
    p.write_text("question,answer\nfine question,fine answer here\nbad,row,with,commas\n")
    assert error_of(p, ev) == f"{p}: line 3: row has 4 columns, the header 2; quote fields that contain the delimiter, or pass --on-error skip"
