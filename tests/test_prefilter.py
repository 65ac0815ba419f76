"""The normalized level's cheap word-key test must never drop a match the full path finds."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leakcheck.canon import normalize
from leakcheck.detect.hashing import TextMatchDetector, _Index, word_key, word_text
from leakcheck.records import Record

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# ASCII with every character Python's str.split() treats as whitespace (\x1c-\x1f too),
# LaTeX delimiters (case is kept inside math) and letters of both cases.
ASCII_BITS = st.sampled_from(["a", "A", "Ab", "xY", "$", "$$", "\\", "\\(", "\\)", "Th", "5", ",", " ", "  ", "\t", "\n", "\x0b",
                              "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "$x$", "$X$", "\\Theta", "<<", "#### 4"])
ASCII_TEXT = st.lists(ASCII_BITS, min_size=1, max_size=24).map("".join)
# Characters NFKC and case folding change: the filter must let every such text through.
ANY_BITS = st.one_of(ASCII_BITS, st.sampled_from(["\u00df", "\u0130", "\uff21", "\u212a", "\u00a0", "\u200b", "\u2019", "\uff04", "\ufb01"]))
ANY_TEXT = st.lists(ANY_BITS, min_size=1, max_size=24).map("".join)


def _perturb(text: str, seed: int) -> str:
    """``text`` with case flipped and whitespace runs changed at random: often the same normalized text."""
    rng = random.Random(seed)
    out = []
    for ch in text:
        if ch.isspace():
            out.append(rng.choice([" ", "  ", "\t", "\n ", "\x1f"]))
        else:
            out.append(ch.swapcase() if rng.random() < 0.5 else ch)
    return rng.choice(["", " ", "\n"]) + "".join(out) + rng.choice(["", " ", "\t"])


def _matches(det: TextMatchDetector, train: list[Record]) -> list[tuple[int, int, str, str]]:
    return sorted((m.pos, m.eval_idx, m.eval_field, m.train_field) for m in det.probe(train))


def _without_word_test(det: TextMatchDetector) -> TextMatchDetector:
    det._words_p = det._words_t = None
    return det


@SETTINGS
@given(ASCII_TEXT)
def test_word_key_survives_normalization(text):
    assert word_text(text) == word_text(normalize(text))
    assert word_key(text) == word_key(normalize(text))


@SETTINGS
@given(st.lists(ANY_TEXT, min_size=1, max_size=4), st.lists(st.tuples(st.integers(0, 3), st.integers()), min_size=1, max_size=8),
       st.lists(ANY_TEXT, max_size=3))
def test_word_test_never_drops_a_normalized_match(evals, picks, others):
    """Train texts made from eval texts (recased, respaced) and unrelated ones: same matches with and without the test."""
    ev = [Record(f"e{i}", i, t, evals[(i + 1) % len(evals)]) for i, t in enumerate(evals)]
    texts = [_perturb(evals[k % len(evals)], seed) for k, seed in picks] + others
    train = [Record(f"t{i}", i, t, texts[-1 - i]) for i, t in enumerate(texts)]
    fast = TextMatchDetector("normalized", ev, min_cross_chars=3)
    full = _without_word_test(TextMatchDetector("normalized", ev, min_cross_chars=3))
    meta, arrays = fast.state()
    saved = TextMatchDetector.from_state("normalized", meta, arrays)  # the word test on hashes
    assert fast._word is word_text and saved._word is word_key
    assert _matches(fast, train) == _matches(full, train) == _matches(saved, train)


def test_word_test_skips_texts_and_keeps_matches():
    ev = [Record("e0", 0, "What is $X$ plus 2?", "It is $X$.\n#### 4")]
    det = TextMatchDetector("normalized", ev, min_cross_chars=20)
    train = [Record("t0", 0, "  WHAT   is $X$ PLUS 2?", "it is $X$. #### 4"), Record("t1", 1, "what is $x$ plus 2?", "it is $x$. #### 4")]
    # t1 passes the word test (it lower-cases math too) but math keeps its case: no match
    assert _matches(det, train) == [(0, 0, "prompt", "prompt"), (0, 0, "target", "target")]
    assert "what is $x$ plus 2?" in det._words_p and "nothing like it" not in det._words_p


def test_index_saved_without_word_keys_still_matches():
    """An index written before word keys (no ``.words`` arrays) probes every text the old way."""
    det = TextMatchDetector("normalized", [Record("e0", 0, "Some Question here", None)], min_cross_chars=20)
    _, arrays = det.state()
    old = {k: v for k, v in arrays.items() if not k.endswith(".words")}
    loaded = TextMatchDetector.from_state("normalized", {"min_cross_chars": 20}, old)
    assert loaded._words_p is None and _Index.from_arrays("prompts", old).words is None
    assert _matches(loaded, [Record("t0", 0, "some  QUESTION here", None)]) == [(0, 0, "prompt", "prompt")]
    again = TextMatchDetector.from_state("normalized", {"min_cross_chars": 20}, arrays)
    assert again._words_p == {word_key("some question here")} and det._words_p == {"some question here"}
    merged = TextMatchDetector.concat([det, again], [1, 1])
    assert merged._words_p == {word_key("some question here")}
    assert _matches(merged, [Record("t0", 0, "SOME question HERE", None)]) == [(0, 0, "prompt", "prompt"), (0, 1, "prompt", "prompt")]


# -- the one-pass chat reader (formats._chat_texts) against the general path -----------------------

ROLES = st.sampled_from(["user", "User", "HUMAN", "prompter", "assistant", "Assistant", "gpt", "model", "system", "tool", "", None, 5])
CONTENT = st.one_of(st.sampled_from(["", " ", "\n", "\u200b", "\u00a0\ufeff", "Hi", "What is 2+2?", "caf\u00e9 \u2014 4"]), st.none(),
                    st.just([{"type": "text", "text": "part"}, {"type": "image_url"}]), st.integers(0, 9))


@st.composite
def _message(draw):
    role_key, content_key = draw(st.sampled_from([("role", "content"), ("from", "value"), ("role", "value"), ("name", "content")]))
    m = {role_key: draw(ROLES), content_key: draw(CONTENT)}
    if draw(st.booleans()):
        m.pop(content_key)
    return m


CHATS = st.one_of(st.lists(st.one_of(_message(), st.just("not a message")), max_size=5), st.none(), st.just("[]"), st.just([]))


def _outcome(f, row):
    from leakcheck.errors import RecordError

    try:
        return f(row, 7)
    except RecordError as e:
        return ("error", e.reason, e.what, e.fix)


@settings(max_examples=500, deadline=None)
@given(CHATS, st.sampled_from(["openai-messages", "sharegpt", "custom"]))
def test_one_pass_chat_reader_equals_the_general_path(messages, fmt):
    from leakcheck.formats import FormatSpec

    spec = FormatSpec(fmt, "messages", "messages", id="id")
    assert spec._chat_key == "messages"
    row = {"messages": messages, "id": 3}
    assert _outcome(spec.extract, row) == _outcome(spec._extract, row)


def test_one_pass_chat_reader_only_for_one_chat_field():
    from leakcheck.formats import FormatSpec, detect_format

    assert FormatSpec("gsm8k", "question", "answer")._chat_key is None
    assert FormatSpec("alpaca", "instruction+input", "output")._chat_key is None
    assert FormatSpec("x", "messages", "messages", history="history")._chat_key is None
    spec = detect_format([{"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}], "id": "r1"}])
    assert spec._chat_key == "messages"
    assert spec.extract({"messages": [{"role": "system", "content": "S"}, {"role": "USER", "content": "Q"},
                                      {"role": "assistant", "content": "A1"}, {"role": "user", "content": "Q2"},
                                      {"role": "assistant", "content": " "}], "id": "r1"}, 0) == ("r1", 0, "Q\nQ2", None, None, None)


def test_cli_finds_normalized_copies_directly_and_through_a_saved_index(tmp_path):
    """Recased, respaced and typographic copies in a chat file: the same normalized findings from the eval
    file (word test on texts) and from a saved index (word test on hashes); exit 1 both times."""
    import json

    from click.testing import CliRunner

    from leakcheck.cli import main

    from .conftest import write_jsonl

    ev = write_jsonl(tmp_path / "eval.jsonl", [
        {"id": "e0", "question": "Lena bakes 4 trays of 12 cookies. How many are left?", "answer": "She has 38 left.\n#### 38"},
        {"id": "e1", "question": "Omar's bill is $21 with the pen. What change?", "answer": "No change.\n#### 0"},
    ])
    chat = lambda q, a: {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}, {"role": "assistant", "content": a}]}  # noqa: E731
    tr = write_jsonl(tmp_path / "train.jsonl", [
        chat("Something else entirely, about trains.", "ok"),
        chat("LENA  bakes 4 trays of 12 cookies.\tHow many are left?", "unrelated"),  # ASCII: through the word test
        chat("Omar\u2019s bill is $21 with the pen.  What CHANGE?", "fine"),  # typographic quote: not ASCII
        chat("Lena bakes 4 trays of 12 cookies. How many are right?", "she has 38 LEFT. #### 38"),  # same first words, other text
    ])
    run = CliRunner().invoke
    direct, via = tmp_path / "direct.json", tmp_path / "via.json"
    res = run(main, ["scan", str(tr), str(ev), "--levels", "exact,normalized", "-j", "1", "--json", str(direct)])
    assert res.exit_code == 1, res.output
    assert run(main, ["index", str(ev), "--levels", "exact,normalized", "-o", str(tmp_path / "e.lcx")]).exit_code == 0
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "e.lcx"), "--levels", "exact,normalized", "-j", "1", "--json", str(via)])
    assert res.exit_code == 1, res.output
    for report in (direct, via):
        found = [(f["eval_id"], f["train_line"], f["kind"], f["level"]) for f in json.loads(report.read_text())["findings"]]
        assert found == [("e0", 2, "prompt", "normalized"), ("e0", 4, "target", "normalized"), ("e1", 3, "prompt", "normalized")]
