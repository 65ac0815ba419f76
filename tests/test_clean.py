"""leakcheck clean: the train (or eval) set written without its leaks, in its own format, with a manifest.

Every test cleans real files through the CLI and then rescans the output with the same eval set.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from leakcheck.cli import main

from .conftest import EXAMPLES
from .test_hub import cache, write_repo  # noqa: F401 - the Hugging Face cache fixture

FIX = Path(__file__).parent / "fixtures" / "clean"
CHAT = EXAMPLES / "chat_small"
COLLAB = EXAMPLES / "collabllm_medium"


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def manifest(out: Path) -> dict:
    return json.loads(Path(str(out).rstrip("/") + ".manifest.json").read_text())


def lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.splitlines(keepends=True)


# -- the redact fixture in every format: 30 documents, 3 with an eval question pasted in (contained), 1 an exact copy ----

CONTAINED = {"doc03": "q0", "doc11": "q1", "doc19": "q2"}
EXACT = {"doc25": "q3"}


def _as(fmt: str, tmp: Path) -> Path:
    """The fixture's train set as ``fmt``: jsonl, gz, parquet (3 row groups) or a folder of 2 shards."""
    src = FIX / "train.jsonl"
    if fmt == "jsonl":
        return src
    if fmt == "gz":
        p = tmp / "train.jsonl.gz"
        p.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
        return p
    if fmt == "parquet":
        p = tmp / "train.parquet"
        rows = [json.loads(x) for x in lines(src)]
        pq.write_table(pa.Table.from_pylist(rows), p, row_group_size=10)
        return p
    d = tmp / "train_shards"
    (d / "data").mkdir(parents=True)
    ls = lines(src)
    (d / "data" / "train-00000-of-00002.jsonl").write_bytes(b"".join(ls[:15]))
    (d / "data" / "train-00001-of-00002.jsonl").write_bytes(b"".join(ls[15:]))
    return d


def _records(path: Path) -> list[dict]:
    """Every record of a cleaned output, in order (a folder: its files in name order)."""
    if path.is_dir():
        return [r for f in sorted(path.rglob("*.jsonl")) for r in _records(f)]
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(x) for x in lines(path) if x.strip()]


def _raw_lines(path: Path) -> list[bytes]:
    if path.is_dir():
        return [x for f in sorted(path.rglob("*.jsonl")) for x in lines(f)]
    return lines(path)


def _out_name(fmt: str, tmp: Path) -> Path:
    return tmp / {"jsonl": "clean.jsonl", "gz": "clean.jsonl.gz", "parquet": "clean.parquet", "folder": "clean"}[fmt]


@pytest.mark.parametrize("fmt", ["jsonl", "gz", "parquet", "folder"])
@pytest.mark.parametrize("mode", ["drop", "flag", "redact"])
def test_round_trip_every_format_and_mode(tmp_path, fmt, mode):
    train, out = _as(fmt, tmp_path), _out_name(fmt, tmp_path)
    res = run("clean", train, FIX / "eval.jsonl", "-o", out, "--mode", mode)
    assert res.exit_code == 0, res.output
    m = manifest(out)
    original = _records(train)
    cleaned = _records(out)
    acted = {r["train_id"]: r for r in m["records"]}
    assert set(acted) == set(CONTAINED) | set(EXACT)
    assert {tid: r["leaks"][0]["eval_id"] for tid, r in acted.items()} == CONTAINED | EXACT
    expected_action = {"drop": dict.fromkeys(acted, "dropped"), "flag": dict.fromkeys(acted, "flagged"),
                       "redact": dict.fromkeys(CONTAINED, "redacted") | dict.fromkeys(EXACT, "dropped")}[mode]
    assert {tid: r["action"] for tid, r in acted.items()} == expected_action
    assert [r["line"] for r in m["records"]] == sorted(r["line"] for r in m["records"]) or fmt == "folder"
    counts = m["counts"]
    assert counts["records"] == 30 and counts["kept"] == len(cleaned) == 30 - list(expected_action.values()).count("dropped")

    # records not acted on are unchanged (JSONL: byte for byte)
    by_id = {r["id"]: r for r in cleaned}
    for r in original:
        if r["id"] not in acted:
            assert {k: v for k, v in by_id[r["id"]].items() if k != "leakcheck_leaked"} == r
            if fmt == "parquet" and mode == "flag":
                assert by_id[r["id"]]["leakcheck_leaked"] == []
    if fmt != "parquet":
        untouched = [x for x in _raw_lines(train) if not any(f'"{t}"'.encode() in x for t in acted)]
        assert [x for x in _raw_lines(out) if not any(f'"{t}"'.encode() in x for t in acted)] == untouched

    if mode == "flag":
        for tid in acted:
            assert by_id[tid]["leakcheck_leaked"] == ["eval"]
            assert {k: v for k, v in by_id[tid].items() if k != "leakcheck_leaked"} == next(r for r in original if r["id"] == tid)
    if mode == "redact":
        for tid, r in acted.items():
            if tid in CONTAINED:
                (cut,) = r["cuts"]
                text = next(o for o in original if o["id"] == tid)["text"]
                assert cut["field"] == "text" and by_id[tid]["text"] == text[: cut["start"]] + text[cut["end"]:]
                assert "(case 10" in text[cut["start"]: cut["end"]] and "Exercise" in by_id[tid]["text"]

    # the rescan: nothing removed is found again; flagged records still are (they were kept)
    again = run("scan", out, FIX / "eval.jsonl", "-q")
    assert again.exit_code == (1 if mode == "flag" else 0), again.output


def test_gz_output_is_gzip(tmp_path):
    out = tmp_path / "clean.jsonl.gz"
    assert run("clean", _as("gz", tmp_path), FIX / "eval.jsonl", "-o", out).exit_code == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert len(gzip.decompress(out.read_bytes()).splitlines()) == 26
    again = tmp_path / "again.jsonl.gz"
    assert run("clean", tmp_path / "train.jsonl.gz", FIX / "eval.jsonl", "-o", again).exit_code == 0
    assert again.read_bytes() == out.read_bytes()  # no name or time in the gzip header: reproducible


def test_parquet_row_group_left_empty_is_not_written(tmp_path):
    train = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([json.loads(x) for x in lines(FIX / "train.jsonl")]), train, row_group_size=1)
    out = tmp_path / "clean.parquet"
    assert run("clean", train, FIX / "eval.jsonl", "-o", out).exit_code == 0
    md = pq.ParquetFile(out).metadata
    assert (pq.ParquetFile(train).metadata.num_row_groups, md.num_row_groups) == (30, 26)
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [1] * 26
    red = tmp_path / "red.parquet"
    assert run("clean", train, FIX / "eval.jsonl", "-o", red, "--mode", "redact").exit_code == 0
    assert pq.ParquetFile(red).metadata.num_row_groups == 29  # the exact copy's group went, the redacted ones stay


def test_parquet_keeps_schema_and_row_groups(tmp_path):
    """The CollabLLM-style example, rewritten in row groups of 50: 35 leaked pairs dropped, layout kept."""
    train = tmp_path / "train.parquet"
    pq.write_table(pq.read_table(COLLAB / "train.parquet"), train, row_group_size=50, compression="zstd")
    out = tmp_path / "clean.parquet"
    res = run("clean", train, COLLAB / "eval.parquet", "-o", out)
    assert res.exit_code == 0, res.output
    assert "400 train records, 365 written, 35 dropped" in res.output
    src, dst = pq.ParquetFile(train), pq.ParquetFile(out)
    assert dst.schema_arrow.equals(src.schema_arrow, check_metadata=True)
    assert dst.metadata.num_row_groups == src.metadata.num_row_groups == 8
    assert dst.metadata.row_group(0).column(0).compression == "ZSTD"
    dropped = {r["index"] for r in manifest(out)["records"]}
    assert len(dropped) == 35 and {r["kind"] for r in manifest(out)["records"][0]["leaks"]} == {"pair"}
    kept = [r for i, r in enumerate(src.read().to_pylist()) if i not in dropped]
    assert dst.read().to_pylist() == kept
    assert run("scan", out, COLLAB / "eval.parquet", "-q").exit_code == 0


def test_flag_adds_a_list_column_to_parquet(tmp_path):
    out = tmp_path / "flagged.parquet"
    res = run("clean", COLLAB / "train.parquet", COLLAB / "eval.parquet", "-o", out, "--mode", "flag", "--flag-field", "leaked_into")
    assert res.exit_code == 0, res.output
    t = pq.read_table(out)
    assert t.schema.field("leaked_into").type == pa.list_(pa.string())
    assert t.drop_columns(["leaked_into"]).equals(pq.read_table(COLLAB / "train.parquet"))
    assert sum(1 for v in t.column("leaked_into").to_pylist() if v == ["eval"]) == 35


def test_chat_example_jsonl_drop_manifest(tmp_path):
    out = tmp_path / "train.clean.jsonl"
    res = run("clean", CHAT / "train_chat.jsonl", CHAT / "eval_questions.jsonl", "-o", out, "--manifest", tmp_path / "m.json")
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["side"] == "train" and m["mode"] == "drop" and m["remove"] == ["all"] and m["eval_sets"] == ["eval_questions"]
    assert m["options"] == {"levels": ["exact", "normalized", "near", "contained"], "on_error": "fail"}
    assert m["counts"] == {"records": 30, "kept": 25, "dropped": 5, "flagged": 0, "redacted": 0, "skipped_unchecked": 0}
    assert m["files"] == [{"input": str(CHAT / "train_chat.jsonl"), "output": str(out), "records": 30, "kept": 25, "dropped": 5,
                           "flagged": 0, "redacted": 0}]
    gone = {r["line"] for r in m["records"]}
    src = lines(CHAT / "train_chat.jsonl")
    assert lines(out) == [x for i, x in enumerate(src, 1) if i not in gone]
    for r in m["records"]:
        assert set(r) == {"file", "line", "index", "train_id", "fingerprint", "action", "eval_sets", "leaks"}
        assert len(r["fingerprint"]) == 32 and r["leaks"] and all({"eval_id", "kind", "level", "score"} <= set(lk) for lk in r["leaks"])
    # deterministic: a second run writes the same manifest
    again = tmp_path / "again.jsonl"
    assert run("clean", CHAT / "train_chat.jsonl", CHAT / "eval_questions.jsonl", "-o", again).exit_code == 0
    m2 = manifest(again)
    assert m2["records"] == m["records"] and m2["counts"] == m["counts"]
    assert run("scan", out, CHAT / "eval_questions.jsonl", "-q").exit_code == 0


def test_remove_reads_like_fail_on(tmp_path):
    out = tmp_path / "clean.jsonl"
    res = run("clean", FIX / "train.jsonl", FIX / "eval.jsonl", "-o", out, "--remove", "exact")
    assert res.exit_code == 0, res.output
    m = manifest(out)
    assert m["remove"] == ["exact"] and [r["train_id"] for r in m["records"]] == ["doc25"]
    assert run("scan", out, FIX / "eval.jsonl", "-q", "--fail-on", "exact").exit_code == 0
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 1  # the contained ones were not asked for
    bad = run("clean", FIX / "train.jsonl", FIX / "eval.jsonl", "-o", tmp_path / "x.jsonl", "--remove", "exactly")
    assert bad.exit_code == 2 and "--remove: unknown item 'exactly'; use levels (exact, normalized, near, contained, semantic)" in bad.output
    unrun = run("clean", FIX / "train.jsonl", FIX / "eval.jsonl", "-o", tmp_path / "x.jsonl", "--levels", "exact", "--remove", "contained")
    assert unrun.exit_code == 2 and "--remove names contained, which does not run (--levels exact)" in unrun.output
    assert not (tmp_path / "x.jsonl").exists()


def test_side_eval_decontaminates_the_benchmark(tmp_path):
    out = tmp_path / "eval.clean.parquet"
    res = run("clean", COLLAB / "train.parquet", COLLAB / "eval.parquet", "-o", out, "--side", "eval")
    assert res.exit_code == 0, res.output
    m = manifest(out)
    assert m["side"] == "eval" and m["counts"]["dropped"] == 35 and m["counts"]["records"] == 100
    assert all(set(r) >= {"eval_id", "leaks"} and all("train_id" in lk for lk in r["leaks"]) for r in m["records"])
    ev = pq.read_table(COLLAB / "eval.parquet").to_pylist()
    dropped = {r["line"] for r in m["records"]}
    assert pq.read_table(out).to_pylist() == [r for i, r in enumerate(ev, 1) if i not in dropped]
    assert pq.ParquetFile(out).schema_arrow.equals(pq.ParquetFile(COLLAB / "eval.parquet").schema_arrow)
    assert run("scan", COLLAB / "train.parquet", out, "-q").exit_code == 0
    redact = run("clean", COLLAB / "train.parquet", COLLAB / "eval.parquet", "-o", tmp_path / "e.parquet", "--side", "eval", "--mode", "redact")
    assert redact.exit_code == 2 and "use --mode drop or flag" in redact.output


def test_with_a_saved_index(tmp_path):
    ix = tmp_path / "gsm.lcx"
    assert run("index", FIX / "eval.jsonl", "-o", ix).exit_code == 0
    out = tmp_path / "clean.jsonl"
    res = run("clean", FIX / "train.jsonl", "--index", ix, "-o", out, "--mode", "redact")
    assert res.exit_code == 0, res.output
    assert manifest(out)["counts"]["redacted"] == 3 and manifest(out)["counts"]["dropped"] == 1
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 0


def test_refuses_to_write_over_an_input(tmp_path):
    train = tmp_path / "train.jsonl"
    shutil.copy(FIX / "train.jsonl", train)
    before = train.read_bytes()
    res = run("clean", train, FIX / "eval.jsonl", "-o", train)
    assert res.exit_code == 2
    assert f"-o {train} is the train input; choose another path: leakcheck never writes over an input" in res.output
    link = tmp_path / "link.jsonl"
    link.symlink_to(train)
    assert run("clean", train, FIX / "eval.jsonl", "-o", link).exit_code == 2
    hard = tmp_path / "hard.jsonl"
    hard.hardlink_to(train)
    res = run("clean", train, FIX / "eval.jsonl", "-o", hard)
    assert res.exit_code == 2 and "is the train input" in res.output
    folder = _as("folder", tmp_path)
    res = run("clean", folder, FIX / "eval.jsonl", "-o", folder)
    assert res.exit_code == 2 and f"is the input folder {folder}; choose another path: leakcheck never writes over an input" in res.output
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    res = run("clean", folder, FIX / "eval.jsonl", "-o", taken)
    assert res.exit_code == 2 and "already exists; the input is a folder or glob, so name a new (or empty) folder" in res.output
    assert (taken / "keep.txt").read_text() == "mine"
    res = run("clean", folder, FIX / "eval.jsonl", "-o", folder / "clean")
    assert res.exit_code == 2 and f"is inside the input folder {folder}; write the output outside it" in res.output
    assert train.read_bytes() == before and not list(tmp_path.glob(".leakcheck-*")) and not (folder / "clean").exists()


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_bytes(b"".join(lines(FIX / "train.jsonl")[:2]) + b'{"id": "x", "text": \n')
    out = tmp_path / "clean.jsonl"
    res = run("clean", train, FIX / "eval.jsonl", "-o", out)
    assert res.exit_code == 2
    assert res.output.startswith(f"leakcheck: error: {train}: line 3: invalid JSON") and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.glob(".leakcheck-*")) and not list(tmp_path.glob("*.manifest.json"))


def test_skipped_rows_are_kept_and_exit_3(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_bytes(b"".join(lines(FIX / "train.jsonl")) + b"not json\n")
    out = tmp_path / "clean.jsonl"
    res = run("clean", train, FIX / "eval.jsonl", "-o", out, "--on-error", "skip")
    assert res.exit_code == 3, res.output
    assert "1 unreadable rows kept unchecked" in res.output
    assert lines(out)[-1] == b"not json\n" and manifest(out)["counts"]["skipped_unchecked"] == 1
    assert run("clean", train, FIX / "eval.jsonl", "-o", tmp_path / "c2.jsonl", "--on-error", "skip", "--allow-partial").exit_code == 0


def test_sharded_folder_keeps_names(tmp_path):
    folder = _as("folder", tmp_path)
    out = tmp_path / "clean"
    assert run("clean", folder, FIX / "eval.jsonl", "-o", out).exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "data/train-00000-of-00002.jsonl", "data/train-00001-of-00002.jsonl"]
    m = manifest(out)
    assert [(Path(f["output"]).name, f["records"], f["dropped"]) for f in m["files"]] == [
        ("train-00000-of-00002.jsonl", 15, 2), ("train-00001-of-00002.jsonl", 15, 2)]


def test_csv_drop_keeps_other_rows_byte_for_byte(tmp_path):
    import csv

    rows = [json.loads(x) for x in lines(FIX / "train.jsonl")]
    train = tmp_path / "train.csv"
    with train.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        w.writerows([r["id"], r["text"]] for r in rows)  # texts with blank lines: quoted fields over several lines
    out = tmp_path / "clean.csv"
    res = run("clean", train, FIX / "eval.jsonl", "-o", out)
    assert res.exit_code == 0, res.output
    assert {r["train_id"] for r in manifest(out)["records"]} == set(CONTAINED) | set(EXACT)
    with train.open(newline="") as fh:
        expect = [r for r in csv.reader(fh) if r[0] not in CONTAINED and r[0] not in EXACT]
    with out.open(newline="") as fh:
        assert list(csv.reader(fh)) == expect
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 0
    flag = run("clean", train, FIX / "eval.jsonl", "-o", tmp_path / "f.csv", "--mode", "flag")
    assert flag.exit_code == 2 and "is CSV, which clean can only drop records from" in flag.output
    assert not (tmp_path / "f.csv").exists()


def test_zstd_stays_zstd(tmp_path):
    import zstandard

    train = tmp_path / "train.jsonl.zst"
    train.write_bytes(zstandard.ZstdCompressor().compress((FIX / "train.jsonl").read_bytes()))
    out = tmp_path / "clean.jsonl.zst"
    assert run("clean", train, FIX / "eval.jsonl", "-o", out, "--mode", "redact").exit_code == 0
    data = zstandard.ZstdDecompressor().stream_reader(out.read_bytes()).read()
    assert out.read_bytes()[:4] == b"\x28\xb5\x2f\xfd" and len(data.splitlines()) == 29
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 0


def test_flag_field_that_exists_is_refused(tmp_path):
    res = run("clean", FIX / "train.jsonl", FIX / "eval.jsonl", "-o", tmp_path / "f.jsonl", "--mode", "flag", "--flag-field", "text")
    assert res.exit_code == 2 and "already has that key; name another with --flag-field" in res.output
    assert not (tmp_path / "f.jsonl").exists() and not list(tmp_path.glob(".leakcheck-*"))


def test_redact_a_non_ascii_document(tmp_path):
    ev = json.loads(lines(FIX / "eval.jsonl")[0])
    filler = " ".join(f"Satz {i}: die Brücke über den Fluss führt nach Süden, wo Bäume blühen." for i in range(8))
    doc = f"Übung für Schüler – «Aufgabe» 1: {ev['question']} — Lösung folgt später, café ☕. {filler}"
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"id": f"d{i}", "text": t}, ensure_ascii=False) + "\n"
                             for i, t in enumerate([doc, "Ein ganz anderer Text über Bäume und Flüsse."])), encoding="utf-8")
    out = tmp_path / "clean.jsonl"
    assert run("clean", train, FIX / "eval.jsonl", "-o", out, "--mode", "redact").exit_code == 0
    (r,) = manifest(out)["records"]
    assert r["action"] == "redacted"
    text = json.loads(lines(out)[0])["text"]
    assert text == f"Übung für Schüler – «Aufgabe» 1:  — Lösung folgt später, café ☕. {filler}"
    assert lines(out)[1] == lines(train)[1]
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 0


def test_library_clean_returns_the_manifest(tmp_path):
    from leakcheck.clean import clean
    from leakcheck.config import ScanConfig
    from leakcheck.scan import build_index

    cfg = ScanConfig()
    ix = build_index([("gsm", str(FIX / "eval.jsonl"))], cfg)
    m = clean(FIX / "train.jsonl", ix, cfg, tmp_path / "c.jsonl", mode="redact")
    assert (m.counts["redacted"], m.counts["dropped"], m.eval_sets) == (3, 1, ("gsm",))
    assert [(a.id, a.action, [c.field for c in a.cuts]) for a in m.records] == [
        ("doc03", "redacted", ["text"]), ("doc11", "redacted", ["text"]), ("doc19", "redacted", ["text"]), ("doc25", "dropped", [])]
    m.write(str(tmp_path / "m.json"))
    assert json.loads((tmp_path / "m.json").read_text())["counts"]["kept"] == 29


def test_hub_split_is_written_with_its_repo_names(tmp_path, request):
    hf_cache = request.getfixturevalue("cache")
    files = {"README.md": "# rl mix\n", "data/train-00000-of-00001.parquet": (COLLAB / "train.parquet").read_bytes(),
             "data/test-00000-of-00001.parquet": (COLLAB / "eval.parquet").read_bytes()}
    write_repo(hf_cache, "my-org/rl-mix", files)
    out = tmp_path / "clean"
    res = run("clean", "my-org/rl-mix::train", COLLAB / "eval.parquet", "-o", out)
    assert res.exit_code == 0, res.output
    assert [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()] == ["data/train-00000-of-00001.parquet"]
    assert pq.read_table(out / "data" / "train-00000-of-00001.parquet").num_rows == 365
    assert manifest(out)["counts"]["dropped"] == 35


def test_flag_names_every_eval_set(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_bytes(lines(FIX / "eval.jsonl")[3])
    out = tmp_path / "flagged.jsonl"
    res = run("clean", FIX / "train.jsonl", FIX / "eval.jsonl", other, "-o", out, "--mode", "flag")
    assert res.exit_code == 0, res.output
    flags = {json.loads(x)["id"]: json.loads(x).get("leakcheck_leaked") for x in lines(out)}
    assert {k: v for k, v in flags.items() if v} == {"doc03": ["eval"], "doc11": ["eval"], "doc19": ["eval"], "doc25": ["eval", "other"]}
    assert lines(out)[25] == lines(FIX / "train.jsonl")[25].rstrip(b"}\n") + b', "leakcheck_leaked": ["eval", "other"]}\n'


def test_redact_a_pair_in_both_fields(tmp_path):
    """Q/A train records: an eval question pasted in a long answer, and an eval pair pasted in both fields."""
    ev = [json.loads(x) for x in lines(FIX / "eval.jsonl")]
    docs = [json.loads(x) for x in lines(FIX / "train.jsonl")]
    rows = [{"id": d["id"], "question": d["text"][:300], "answer": d["text"][300:]} for d in docs]
    pad = docs[0]["text"][:400]
    rows[5] = {"id": "both", "question": f"{pad} {ev[1]['question']} {pad}", "answer": f"{pad} {ev[1]['answer']} {pad}"}
    train = tmp_path / "qa.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "clean.jsonl"
    assert run("clean", train, FIX / "eval.jsonl", "-o", out, "--mode", "redact").exit_code == 0
    acts = {r["train_id"]: (r["action"], r["leaks"][0]["kind"], [c["field"] for c in r.get("cuts", [])]) for r in manifest(out)["records"]}
    assert acts == {"doc03": ("redacted", "prompt_in_target", ["answer"]), "both": ("redacted", "pair", ["question", "answer"]),
                    "doc11": ("redacted", "prompt_in_target", ["answer"]), "doc19": ("redacted", "prompt_in_target", ["answer"]),
                    "doc25": ("dropped", "prompt", [])}
    both = json.loads(lines(out)[5])
    assert both == {"id": "both", "question": f"{pad}  {pad}", "answer": f"{pad}  {pad}"}
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == 0


def test_json_array_and_saved_dataset_are_refused_before_the_scan(tmp_path):
    arr = tmp_path / "train.json"
    arr.write_text(json.dumps([json.loads(x) for x in lines(FIX / "train.jsonl")], indent=1))
    res = run("clean", arr, FIX / "eval.jsonl", "-o", tmp_path / "c.json")
    assert res.exit_code == 2
    assert f"clean: {arr} is a JSON document, not JSON lines; convert it to JSONL (one object per line) first" in res.output
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"data": [json.loads(x) for x in lines(FIX / "train.jsonl")]}))  # one line, one list of records
    res = run("clean", wrapped, FIX / "eval.jsonl", "-o", tmp_path / "c.json")
    assert res.exit_code == 2 and f"clean: {wrapped} is a JSON document, not JSON lines" in res.output
    named = tmp_path / "lines.json"
    shutil.copy(FIX / "train.jsonl", named)  # JSON lines under a .json name: cleaned as JSONL
    assert run("clean", named, FIX / "eval.jsonl", "-o", tmp_path / "c.json").exit_code == 0
    assert len(lines(tmp_path / "c.json")) == 26
    (tmp_path / "c.json").unlink()
    import datasets

    saved = tmp_path / "saved"
    datasets.Dataset.from_list([json.loads(x) for x in lines(FIX / "train.jsonl")]).save_to_disk(str(saved))
    res = run("clean", saved, FIX / "eval.jsonl", "-o", tmp_path / "c")
    assert res.exit_code == 2 and "is a saved Hugging Face dataset; clean writes files" in res.output
    assert not (tmp_path / "c.json").exists() and not (tmp_path / "c").exists()


def _expected_train_rows(name: str) -> set[int]:
    """0-based train rows each bundled example documents as leaked (its own answer key, not a scan)."""
    d = EXAMPLES / name
    key = json.loads(next(p for p in (d / "expected_leaks.json", d / "expected.json") if p.is_file()).read_text())
    return set(key["train_rows"].values()) if "train_rows" in key else {lk["train_row"] for lk in key["leaks"]}


@pytest.mark.parametrize(("name", "train", "ev"), [
    ("chat_small", "train_chat.jsonl", "eval_questions.jsonl"),
    ("collabllm_medium", "train.parquet", "eval.parquet"),
    ("healthbench_rubrics", "train.jsonl", "eval.jsonl"),
    ("healthbench_rubrics_verl", "train.parquet", "eval.parquet"),
])
def test_bundled_examples_drop_exactly_their_documented_leaks(tmp_path, name, train, ev):
    out = tmp_path / f"clean{Path(train).suffix}"
    res = run("clean", EXAMPLES / name / train, EXAMPLES / name / ev, "-o", out)
    assert res.exit_code == 0, res.output
    assert {r["index"] for r in manifest(out)["records"]} == _expected_train_rows(name)
    assert run("scan", out, EXAMPLES / name / ev, "-q").exit_code == 0


def test_headerless_csv_can_drop_its_first_row(tmp_path):
    ev = [json.loads(x) for x in lines(FIX / "eval.jsonl")]
    train = tmp_path / "train.csv"
    train.write_text(f'"{ev[0]["question"]}","{ev[0]["answer"]}"\n"Unrelated question about rivers?","Rivers flow downhill to the sea."\n')
    out = tmp_path / "clean.csv"
    res = run("clean", train, FIX / "eval.jsonl", "-o", out, "--train-prompt-field", "0", "--train-target-field", "1")
    assert res.exit_code == 0, res.output
    assert [(r["line"], r["action"]) for r in manifest(out)["records"]] == [(1, "dropped")]
    assert out.read_bytes() == train.read_bytes().splitlines(keepends=True)[-1]  # the first record spans three lines


def test_progress_bar_only_when_asked(tmp_path):
    res = CliRunner().invoke(main, ["clean", str(FIX / "train.jsonl"), str(FIX / "eval.jsonl"), "-o", str(tmp_path / "a.jsonl"), "--progress"])
    assert res.exit_code == 0 and "train" in res.stderr and "30 records" in res.stderr
    res = CliRunner().invoke(main, ["clean", str(FIX / "train.jsonl"), str(FIX / "eval.jsonl"), "-o", str(tmp_path / "b.jsonl")], env={"CI": "true"})
    assert res.exit_code == 0 and "records," not in res.stderr and "B/s" not in res.stderr
    assert res.stderr == "" and res.stdout.startswith(f"wrote {tmp_path / 'b.jsonl'}: 30 train records, 26 written, 4 dropped; manifest ")


@pytest.mark.parametrize("mode", ["drop", "flag", "redact"])
def test_bom_crlf_and_no_final_newline(tmp_path, mode):
    """A BOM on a leaked first line, CRLF line ends, a leaked last line without a newline: each byte is accounted for."""
    src = [x.rstrip(b"\n") for x in lines(FIX / "train.jsonl")]
    first, middle, last = src[3], [src[i] for i in (0, 1, 2, 4, 5)], src[25]  # a contained document, clean ones, the exact copy
    train = tmp_path / "train.jsonl"
    train.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join([first, *middle, last]))
    out = tmp_path / "clean.jsonl"
    res = run("clean", train, FIX / "eval.jsonl", "-o", out, "--mode", mode)
    assert res.exit_code == 0, res.output
    got = out.read_bytes()
    kept = b"\r\n".join(middle) + b"\r\n"
    flag = b', "leakcheck_leaked": ["eval"]}'
    if mode == "drop":
        assert got == kept
    if mode == "flag":
        assert got == b"\xef\xbb\xbf" + first[:-1] + flag + b"\r\n" + kept + last[:-1] + flag
    if mode == "redact":
        head, rest = got.split(b"\r\n", 1)
        assert head.startswith(b'\xef\xbb\xbf{"id": "doc03"') and b"Exercise 1. " in head and rest == kept
    assert run("scan", out, FIX / "eval.jsonl", "-q").exit_code == (1 if mode == "flag" else 0)


def test_side_eval_flag_names_the_train_files(tmp_path):
    out = tmp_path / "eval.flagged.jsonl"
    res = run("clean", CHAT / "train_chat.jsonl", CHAT / "eval_questions.jsonl", "-o", out, "--side", "eval", "--mode", "flag")
    assert res.exit_code == 0, res.output
    m = manifest(out)
    flagged = {r["line"] for r in m["records"]}
    assert m["counts"]["flagged"] == len(flagged) > 0 and m["counts"]["kept"] == m["counts"]["records"]
    for i, (a, b) in enumerate(zip(lines(CHAT / "eval_questions.jsonl"), lines(out), strict=True), 1):
        assert b == (a.rstrip(b"}\n") + b', "leakcheck_leaked": ["train_chat.jsonl"]}\n' if i in flagged else a)
