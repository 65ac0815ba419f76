"""The byte tokenizer on non-ASCII text: the same tokens as the regex reference, faster."""

from __future__ import annotations

import os
import re
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leakcheck.canon import normalize
from leakcheck.detect import grams
from leakcheck.detect.grams import _CJK, words

from .conftest import SHARED_DATA, needs_shared

# What _spaced did before it visited only the non-ASCII characters: every chunk found by
# one regex, joined by spaces (ASCII punctuation may stay in runs: the byte tokenizer splits them).
_CHUNKS = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|[!-/:-@\\[-^`{{-~]+|[^\\w\\s\\x00-\\x7f]")


def _reference(texts: list[str]) -> np.ndarray:
    parts = []
    for text in texts:
        t = normalize(text)
        simple = grams._WIDE_RUN.search(t) is None and grams._marks()[0].search(t) is None
        parts.append(" ".join(_CHUNKS.findall(t)) if simple else " ".join(grams.tokens(t)))
    return grams._words_ascii(parts, np.array([len(p.encode()) + 1 for p in parts], dtype=np.int64)).hashes


_ALPHABET = st.sampled_from(list("ab Z9_,.<=-$\\\t\n") + list("×€’“é ñ\u00a0\u2009\u3000中文かナ한\u2028ß٣ﬁ…—·°√≤") + ["\u0301"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_ALPHABET, min_size=1, max_size=40).filter(lambda t: not t.isascii()), min_size=1, max_size=5))
def test_non_ascii_texts_hash_to_the_reference_tokens(texts):
    assert words(texts).hashes.tolist() == _reference(texts).tolist()


def test_symbols_cjk_and_wide_spaces_are_token_boundaries():
    w = words(["3×4 = 12\u3000€5 中文 naïve,"])
    assert [w.text(i, 1) for i in range(len(w.hashes))] == ["3", "×", "4", "=", "12", "€", "5", "中", "文", "naïve", ","]


@needs_shared
def test_gsm8k_non_ascii_answers_hash_as_the_reference():
    import json

    texts = [t for line in (SHARED_DATA / "gsm8k" / "test.jsonl").open() for t in json.loads(line).values() if not t.isascii()]
    assert len(texts) > 100
    assert words(texts).hashes.tolist() == _reference(texts).tolist()


# -- the compiled tokenizer (leakcheck/_kernels.c) against the NumPy one --------------------------

_BYTES_ALPHABET = st.sampled_from(list("aZ9_ -=*#!?.~\t\n\x01\x7f\x00é中") + ["=====", "-" * 70, "Ab" * 40, "x" * 64, "Q" * 65, "++++"])


def _numpy_words(texts: list[str | None]) -> grams.Words:
    with mock.patch.dict(os.environ, {"LEAKCHECK_NO_KERNEL": "1"}):
        return words(texts)


def _same(a: grams.Words, b: grams.Words) -> bool:
    return a.blob == b.blob and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("hashes", "offsets", "starts", "ends"))


needs_kernel = pytest.mark.skipif(grams._kernel() is None, reason="leakcheck._kernels was not compiled (no C compiler at install)")


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(_BYTES_ALPHABET, max_size=30).map("".join)), max_size=8))
def test_the_compiled_tokenizer_gives_the_numpy_tokens_and_hashes(texts):
    """Runs of symbols, tokens of 8, 64 and 65+ bytes (xxh3), upper case, control bytes, empty texts."""
    assert _same(words(texts), _numpy_words(texts))


@needs_kernel
def test_the_compiled_tokenizer_on_bundled_chat_records():
    import json
    from pathlib import Path

    import leakcheck

    path = Path(leakcheck.__file__).parent / "data" / "chat_small" / "train_chat.jsonl"
    texts = [m["content"] for line in path.open() for m in json.loads(line)["messages"]]
    assert len(texts) > 50
    got = words(texts)
    assert _same(got, _numpy_words(texts)) and len(got.hashes) > 1000


def test_without_the_compiled_tokenizer_the_numpy_one_runs():
    w = _numpy_words(["The CAT sat -----", None])
    assert [w.text(i, 1) for i in range(len(w.hashes))] == ["The", "CAT", "sat", "-----"] and w.offsets.tolist() == [0, 4, 4]


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.lists(st.integers(0, 2**64 - 1), max_size=300),
       st.sampled_from([0, 1, 2**32, 2**64 - 1]))
def test_the_compiled_hash_set_lookup_finds_what_the_numpy_one_finds(keys, others, special):
    """Every key found at its position, every other hash -1; 0 (the empty slot's key) included."""
    k = np.array(keys + [special], dtype=np.uint64)
    s = grams.HashSet(k)
    h = np.array(others + keys + [special, 0, 0], dtype=np.uint64)
    got = s.find(h)
    assert got.tolist() == s._find_numpy(h).tolist()
    present = np.isin(h, s.keys)
    assert (got[~present] == -1).all() and (s.keys[got[present]] == h[present]).all()


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 2**64 - 1)), max_size=400), st.booleans())
def test_the_compiled_distinct_counts_are_the_numpy_ones(pairs, shuffle):
    """Per text, distinct hashes (40 bits compared); unsorted texts fall back to the NumPy count."""
    pairs = pairs + [(p[0], p[1]) for p in pairs[::3]]  # repeats
    if not shuffle:
        pairs.sort(key=lambda p: p[0])
    text_of = np.array([t for t, _ in pairs], dtype=np.int64)
    h = np.array([x for _, x in pairs], dtype=np.uint64)
    got = grams.distinct_counts(h, text_of, 31)
    assert got.tolist() == grams._distinct_counts_numpy(h, text_of, 31).tolist()
    assert got.tolist() == [len({x >> 24 for t, x in pairs if t == i}) for i in range(31)]


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=20), max_size=8), st.integers(1, 13))
def test_the_compiled_ngrams_are_the_numpy_ones(texts, n):
    """The rolling window of the compiled version gives each n-gram's hash as NumPy computes it in full."""
    flat = np.array([x for t in texts for x in t], dtype=np.uint64)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])]).astype(np.int64)
    w = grams.Words(flat, offsets, b"", None, None)
    got, want = grams.ngrams(w, n), grams._ngrams_numpy(w, n)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert len(got[0]) == sum(max(len(t) - n + 1, 0) for t in texts)


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 2**64 - 1)), max_size=300), st.booleans())
def test_the_compiled_distinct_pairs_are_the_numpy_ones(pairs, shuffle):
    """Repeated pairs, the first occurrence of each; unsorted texts fall back to the NumPy sort."""
    pairs = pairs + pairs[::2]
    if not shuffle:
        pairs.sort(key=lambda p: p[0])
    text_of = np.array([t for t, _ in pairs], dtype=np.int64)
    h = np.array([x for _, x in pairs], dtype=np.uint64)
    got, want = grams.distinct_pairs(h, text_of), grams._distinct_pairs_numpy(h, text_of)
    assert all(a.tolist() == b.tolist() for a, b in zip(got, want))
    assert list(zip(got[1].tolist(), got[0].tolist())) == sorted(set(pairs))
