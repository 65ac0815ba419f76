"""The compiled JSONL chat reader (leakcheck/_chatlines.c) against the usual path: orjson, then
FormatSpec.extract, line by line. The same records, counts, skips and errors, and its filter
never drops a line a level would match."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leakcheck.canon import normalize
from leakcheck.config import ScanConfig
from leakcheck.detect.hashing import word_text
from leakcheck.engine import RowCounts, ScanJob, records_of, shard_records
from leakcheck.errors import InputError
from leakcheck.formats import FormatSpec
from leakcheck.io import chat_lines
from leakcheck.io.readers import line_rows
from leakcheck.io.shards import Shard
from leakcheck.records import Record
from leakcheck.scan import build_index

needs_reader = pytest.mark.skipif(chat_lines._module() is None, reason="leakcheck._chatlines is not compiled")

_TEXT = st.lists(st.sampled_from(["Hello", "x", "What is 2+2?"] * 4 + list("ab Z9_,.$\\\"/\t\n\r\x00\x01\x1c\x7f") + list("é中’\u200b\u00a0\U0001f600\u0301") + ["Hello", "  "]),
                 max_size=12).map("".join)
_ROLE = st.sampled_from(["user", "USER", "Human", "assistant", "Assistant", "gpt", "system", "tool", "", "usér", 7, None])
_VALUE = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "role"]), inner, max_size=3),
                      max_leaves=8)


@st.composite
def _message(draw: st.DrawFn) -> object:
    odd = draw(st.integers(0, 9)) == 0  # one message in ten strays from the common shape
    if odd and draw(st.integers(0, 3)) == 0:
        return draw(_VALUE)  # not an object
    m: dict[str, object] = {}
    keys = ["role", "content"] + (["name"] if draw(st.booleans()) else [])
    if odd:
        keys = draw(st.permutations(keys))[: draw(st.integers(0, len(keys)))]
    for key in keys:
        if key == "role":
            m[key] = draw(_ROLE if odd else st.sampled_from(["user", "assistant", "system", "User", "ASSISTANT", "human", "gpt"]))
        elif key == "content":
            m[key] = draw(_TEXT | _VALUE) if odd else draw(_TEXT)
        else:
            m[key] = draw(_VALUE)
    if odd and draw(st.integers(0, 3)) == 0:
        m["from"], m["value"] = "human", draw(_TEXT)
    return m


_ID = st.text(max_size=6) | st.integers(-10**6, 10**6)


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    row: dict[str, object] = {}
    if draw(st.integers(0, 20)):
        row["messages"] = draw(st.lists(_message(), min_size=1, max_size=5)) if draw(st.integers(0, 20)) else draw(_VALUE)
    if draw(st.integers(0, 3)):
        row["id"] = draw(_ID if draw(st.integers(0, 5)) else _VALUE | st.integers(-10**19, 10**19))
    if draw(st.booleans()):
        row["extra"] = draw(_VALUE)
    keys = list(row)
    draw(st.randoms()).shuffle(keys)
    text = json.dumps({k: row[k] for k in keys}, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    out = text.encode("utf-8", "surrogatepass")
    cut = draw(st.integers(0, 25))
    if cut == 0:
        out = out[: draw(st.integers(0, len(out)))]  # a truncated or damaged line
    elif cut == 1:
        out = out.replace(b'"id"', b'"id": 1, "id"', 1)  # a duplicate key
    elif cut == 2:
        out = out + b" \x0c"
    elif cut == 3:
        out = b"  " + out + b"\r"
    return out


def _spec(id_field: str | None = "id") -> FormatSpec:
    return FormatSpec("openai-messages", "messages", "messages", id_field, id_required=id_field is not None and id_field != "id")


def _usual(path: Path, spec: FormatSpec) -> tuple[list[tuple[Record, int]], RowCounts]:
    counts = RowCounts()
    with open(path, "rb") as fh:
        recs = list(records_of(line_rows(str(path), fh, 0, os.path.getsize(path)), spec, "skip", counts))
    return recs, counts


def _compiled(path: Path, spec: FormatSpec, filtering=None, sparse: list | None = None) -> tuple[list[tuple[Record, int]], RowCounts]:
    counts = RowCounts()
    job = ScanJob(ScanConfig(on_error="skip"), spec, ())
    shard = Shard(0, str(path), "lines", 0, os.path.getsize(path), 0, os.path.getsize(path))
    out = shard_records(shard, job, counts, filtering)
    if sparse is not None:
        sparse.append(out.sparse)
    return list(out), counts


@needs_reader
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=8), blank=st.integers(0, 8), id_field=st.sampled_from(["id", None, "extra"]))
def test_the_compiled_reader_reads_what_the_usual_path_reads(tmp_path_factory, lines, blank, id_field):
    lines.insert(blank % (len(lines) + 1), b"   ")
    path = tmp_path_factory.mktemp("c") / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    spec = _spec(id_field)
    got, got_counts = _compiled(path, spec)
    want, want_counts = _usual(path, spec)
    assert got == want
    assert got_counts == want_counts


_CHAT_IN_A_STRING = json.dumps([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}])


@st.composite
def _flat_line(draw: st.DrawFn) -> bytes:
    """A GSM8K-style row: top-level question and answer, mostly strings, sometimes anything else."""
    row: dict[str, object] = {}
    for key in ("question", "answer"):
        k = draw(st.integers(0, 12))
        if k == 0:
            continue  # missing
        row[key] = (draw(_VALUE) if k == 1 else None if k == 2 else _CHAT_IN_A_STRING if k == 3 else "[{" + draw(_TEXT) if k == 4
                    else draw(_TEXT))
    if draw(st.integers(0, 3)):
        row["id"] = draw(_ID if draw(st.integers(0, 5)) else _VALUE)
    if draw(st.booleans()):
        row["extra"] = draw(_VALUE)
    keys = list(row)
    draw(st.randoms()).shuffle(keys)
    out = json.dumps({k: row[k] for k in keys}, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 20)) == 0:
        out = out[: draw(st.integers(0, len(out)))]
    return out


@needs_reader
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_flat_line(), min_size=1, max_size=8), id_field=st.sampled_from(["id", None]), target=st.booleans())
def test_flat_rows_are_read_as_the_usual_path_reads_them(tmp_path_factory, lines, id_field, target):
    """Top-level prompt and target strings (missing, null, blank, not text, a chat stored as a JSON string)."""
    path = tmp_path_factory.mktemp("f") / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    spec = FormatSpec("gsm8k", "question", "answer" if target else None, id_field)
    assert chat_lines._keys(spec) is not None
    got, got_counts = _compiled(path, spec)
    assert (got, got_counts) == _usual(path, spec)


_GOOD = json.dumps({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2? caf\u00e9 \\u00e9"},
                               {"role": "assistant", "content": "4 \ud83d\ude00"}], "id": 12, "extra": [1.5, {"a": None}]}).encode()


@needs_reader
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_GOOD)), st.integers(0, 3), st.binary(min_size=1, max_size=3)), min_size=1, max_size=4))
def test_damaged_bytes_are_read_as_the_usual_path_reads_them(tmp_path_factory, edits):
    """A valid chat line with bytes replaced, inserted or cut anywhere (quotes, backslashes, invalid
    UTF-8, NUL, a cut escape): never a crash or a read past the line, and the same records and skips."""
    line = bytearray(_GOOD)
    for pos, kind, b in edits:
        pos = min(pos, len(line))
        if kind == 0:
            line[pos : pos + len(b)] = b
        elif kind == 1:
            line[pos:pos] = b
        elif kind == 2:
            del line[pos : pos + len(b)]
        else:
            line[pos:pos] = b"\\u" + b[:1].hex().encode()  # an escape cut short or of a surrogate
    path = tmp_path_factory.mktemp("d") / "t.jsonl"
    path.write_bytes(bytes(line).replace(b"\n", b" ") + b"\n" + _GOOD + b"\n")
    got, got_counts = _compiled(path, _spec())
    assert (got, got_counts) == _usual(path, _spec())


@needs_reader
def test_a_plain_chat_file_is_read_in_c_and_odd_lines_the_usual_way(tmp_path, monkeypatch):
    chat = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"},
                         {"role": "assistant", "content": "4"}], "id": "a"}
    odd = [b'{"messages": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Yo"}], "id": "sharegpt"}',
           b'{"messages": [{"role": "user", "content": "lone \\ud800"}], "id": "surrogate"}',
           b'{"messages": [{"role": "user", "content": "x"}], "id": 1e3}',
           b'{"messages": [{"role": "user", "content": "broken"}', b'\xef\xbb\xbf{"id": "bom"}']
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join([json.dumps(chat).encode(), *odd, json.dumps(chat | {"id": 7}).encode()]) + b"\n")
    spec = _spec()
    chat_shard = chat_lines.read_chat_shard(Shard(0, str(path), "lines", 0, path.stat().st_size, 0, path.stat().st_size), spec, None)
    assert chat_shard is not None
    assert [(r.id, line) for r, line in chat_shard.kept] == [("a", 1), ("7", 7)]
    assert [line for _, line, _, _ in chat_shard.declined] == [2, 3, 4, 5, 6]
    got, got_counts = _compiled(path, spec)
    assert (got, got_counts) == _usual(path, spec)
    assert [r.id for r, _ in got] == ["a", "sharegpt", "surrogate", "1000.0", "7"]
    assert sum(got_counts.skipped.values()) == 2  # the broken line and the one without a chat
    # and the same error, on the same line, when bad rows fail the scan
    job = ScanJob(ScanConfig(on_error="fail"), spec, ())
    shard = Shard(0, str(path), "lines", 0, path.stat().st_size, 0, path.stat().st_size)
    with pytest.raises(InputError) as fast:
        list(shard_records(shard, job, RowCounts()))
    monkeypatch.setenv("LEAKCHECK_NO_KERNEL", "1")
    with pytest.raises(InputError) as usual:
        list(shard_records(shard, job, RowCounts()))
    assert str(fast.value) == str(usual.value) and "line 5" in str(fast.value)


@needs_reader
def test_a_line_over_the_limit_sends_the_shard_the_usual_way(tmp_path, monkeypatch):
    from leakcheck.io import readers

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * 300}]}) + "\n")
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 100)
    assert chat_lines.read_chat_shard(Shard(0, str(path), "lines", 0, path.stat().st_size, 0, path.stat().st_size), _spec(), None) is None
    recs, counts = _compiled(path, _spec())
    assert recs == [] and counts.skipped == {"line_too_long": 1}


@needs_reader
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=70))
def test_the_fast_hash_has_a_python_twin(b):
    assert chat_lines._module().text_hash(b) == chat_lines._text_hash_python(b)


# -- the filter: a line it drops is a line no level matches -------------------------------------

_WORDS = ["What", "is", "the", "total", "cost", "of", "5", "apples", "$x$", "\\Theta", "Let", "x", "be"]
_TAIL = ["", " café", " naïve ’quoted’", " \u200bzero width", "\u00a0nbsp", " ﬁne", " STRASSE ß", " e\u0301"]


def _variant(rnd: random.Random, text: str) -> str:
    """``text`` or a text that normalizes like it, or like its first words only."""
    k = rnd.randrange(5)
    if k == 0:
        return text
    if k == 1:
        return "  " + text.upper().replace(" ", " \t ")
    if k == 2:
        return text + rnd.choice(_TAIL)
    if k == 3:
        return " ".join(text.split()[:5]) + rnd.choice(_TAIL) + " more words"
    return " ".join(rnd.choice(_WORDS) for _ in range(rnd.randrange(1, 9))) + rnd.choice(_TAIL)


@needs_reader
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), levels=st.sampled_from([("exact",), ("normalized",), ("exact", "normalized")]))
def test_the_filter_keeps_every_line_a_level_matches(tmp_path_factory, seed, levels):
    rnd = random.Random(seed)

    def text() -> str:
        return " ".join(rnd.choice(_WORDS) for _ in range(rnd.randrange(1, 9))) + rnd.choice(_TAIL)

    evals = [{"question": text(), "answer": text()} for _ in range(6)]
    d = tmp_path_factory.mktemp("f")
    (d / "eval.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evals))
    train = []
    for i in range(40):
        e = rnd.choice(evals)
        turns = [{"role": "user", "content": _variant(rnd, e["question"])}, {"role": "assistant", "content": _variant(rnd, e["answer"])}]
        train.append(json.dumps({"messages": turns, "id": f"t{i}"}) + "\n")
    (d / "train.jsonl").write_text("".join(train))
    index = build_index([("e", str(d / "eval.jsonl"))], ScanConfig(levels=levels))
    filtering = index.filtering
    assert filtering is not None and filtering.levels == set(levels) and filtering.drop
    spec = _spec()
    kept, kept_counts = _compiled(d / "train.jsonl", spec, filtering)
    sparse: list = []
    marked, marked_counts = _compiled(d / "train.jsonl", spec, dataclasses.replace(filtering, drop=False), sparse=sparse)
    every, every_counts = _compiled(d / "train.jsonl", spec)
    assert kept_counts == every_counts == marked_counts  # dropped lines are still counted
    assert marked == every and sparse[0].levels == set(levels)
    matched = {pos for part in index.parts.values() for pos in (m.pos for m in part.probe([r for r, _ in every]))}
    assert {every[p][0].id for p in matched} <= {r.id for r, _ in kept}
    assert {every[p][0].row for p in matched} <= sparse[0].rows
    assert {r.row for r, _ in kept} == sparse[0].rows  # one test, dropping or marking


@needs_reader
@pytest.mark.parametrize("nonascii", [False, True])
def test_the_word_test_reads_an_ascii_head_of_a_non_ascii_text(nonascii):
    mod = chat_lines._module()
    hit = "First find the total number of ’apples’"
    texts = [hit, "first  FIND the total\tnumber café", "Second find the total number é", "First find the total numberé x"]
    words = frozenset({chat_lines.text_hash(word_text(normalize(hit)).encode())})
    lf = chat_lines.LineFilter(words_p=words, words_t=words, words=True, nonascii=nonascii)
    lines = b"".join(json.dumps({"messages": [{"role": "user", "content": t}]}).encode() + b"\n" for t in texts)
    out = mod.chat_lines(lines, 0, b"messages", None, False, None, False, 1 << 20, Record, (*lf.packed, True))
    # the third has other first words; the fourth's fifth word is not ASCII: no word test, kept only with ``nonascii``
    assert [rec.prompt for rec, _ in out[3]] == texts[:2] + texts[3:] * nonascii


# -- whole scans: the same report read in C or the usual way --------------------------------------


@needs_reader
@pytest.mark.parametrize("levels", [("exact", "normalized"), ("exact", "normalized", "near", "contained")])
def test_a_scan_reports_the_same_read_in_c_or_the_usual_way(tmp_path, monkeypatch, levels):
    """Exact copies, normalized and near variants, odd and bad lines in several shards: with only the
    text levels the C reader drops lines, with the fuzzy ones too it marks which the text levels probe."""
    import leakcheck
    import leakcheck.io.shards as shards
    from leakcheck.report.json import dumps

    from .test_index import ANSWERS, QUESTIONS, _strip

    ev = tmp_path / "eval.jsonl"
    ev.write_text("".join(json.dumps({"id": f"e{i}", "question": q, "answer": a}) + "\n" for i, (q, a) in enumerate(zip(QUESTIONS, ANSWERS))))
    rnd = random.Random(7)
    rows = []
    for i in range(300):
        k = rnd.randrange(len(QUESTIONS))
        q, a = rnd.choice([(QUESTIONS[k], ANSWERS[k]), (QUESTIONS[k].upper() + " ", "x"), (QUESTIONS[k].replace("the", "a"), ANSWERS[k] + " é"),
                           ("Unrelated question number %d about the weather" % i, "sun"), ("’" + QUESTIONS[k], ANSWERS[k].lower())])
        rows.append(json.dumps({"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}], "id": f"t{i}"}))
    rows[17] = '{"messages": [{"from": "human", "value": "%s"}], "id": "sharegpt"}' % QUESTIONS[0]
    rows[99] = '{"messages": [{"role": "user", "content": "broken'
    (tmp_path / "train.jsonl").write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(shards, "SHARD_BYTES", 8192)
    from leakcheck.detect.hashing import TextMatchDetector

    probed: list[int] = []
    probe = TextMatchDetector.probe
    monkeypatch.setattr(TextMatchDetector, "probe", lambda self, batch, stats=None: probed.append(len(batch)) or probe(self, batch, stats))
    cfg = ScanConfig(levels=levels, on_error="skip")
    fast = leakcheck.scan(tmp_path / "train.jsonl", ev, cfg)
    fast_probed, probed[:] = sum(probed), []
    monkeypatch.setenv("LEAKCHECK_NO_KERNEL", "1")
    usual = leakcheck.scan(tmp_path / "train.jsonl", ev, cfg)
    assert _strip(dumps(fast)) == _strip(dumps(usual))
    assert fast.train.rows == 300 and sum(fast.train.skipped.values()) == 1
    assert {f.level for f in fast.findings} >= {"exact", "normalized"} and len(fast.findings) > 100
    # the text levels saw only the lines that could match them: the unrelated ones never
    assert sum(probed) == 2 * 299 and fast_probed < sum(probed) * 0.9
