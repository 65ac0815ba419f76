"""Words, word n-grams and their document frequencies, hashed for a whole batch at once.

Words are the ``\\w+`` runs of :func:`leakcheck.canon.normalize`'d text. Each word becomes a
64-bit hash (polars, in Rust); an n-gram hash is a polynomial combination of its ``n`` word
hashes, computed for every position of the concatenated batch with ``n`` vectorized
multiply-adds, then mixed. Nothing here loops over words or n-grams in Python.

>>> w = words(["The cat sat on the mat.", "", "the CAT sat"])
>>> w.offsets.tolist()
[0, 6, 6, 9]
>>> h, text_of = ngrams(w, 3)
>>> text_of.tolist()
[0, 0, 0, 0, 2]
>>> bool(h[0] == h[4])  # "the cat sat" in text 0 and text 2
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..canon import normalize

_U64 = np.uint64
_MUL = _U64(0x9E3779B97F4A7C15)  # odd: x -> x * MUL is a bijection mod 2**64
_SEED = 0x1EA4C4EC  # polars' hash is stable within one polars version; eval and train share a process


@dataclass(frozen=True)
class Words:
    """Word hashes of a list of texts, concatenated; text ``i`` is ``hashes[offsets[i]:offsets[i+1]]``."""

    hashes: np.ndarray  # uint64
    offsets: np.ndarray  # int64, len(texts) + 1
    series: pl.Series | None = None  # the words themselves, when asked for (to show n-grams)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def text(self, start: int, n: int) -> str:
        """The n words from global word position ``start``, joined by spaces."""
        assert self.series is not None
        return " ".join(self.series.slice(start, n).to_list())


def words(texts: Sequence[str | None], keep: bool = False) -> Words:
    """Tokenize and hash a batch of texts; ``None`` counts as a text without words."""
    # ASCII text only needs lower-casing, which polars does; the rest goes through
    # normalize() so both sides fold Unicode the same way as the normalized level.
    prepared = [t if t is None or t.isascii() else normalize(t) for t in texts]
    s = pl.Series(prepared, dtype=pl.String).str.to_lowercase().str.extract_all(r"\w+")
    lengths = s.list.len().fill_null(0).to_numpy().astype(np.int64)
    flat = s.explode().drop_nulls()
    offsets = np.zeros(len(prepared) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    hashes = flat.hash(seed=_SEED).to_numpy()
    if len(hashes) != offsets[-1]:  # pragma: no cover - would mean polars changed explode()
        raise RuntimeError("word count mismatch while tokenizing")
    return Words(hashes.astype(_U64, copy=False), offsets, flat if keep else None)


def mix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, element-wise (spreads every input bit over all bits)."""
    h = h ^ (h >> _U64(33))
    h *= _U64(0xFF51AFD7ED558CCD)
    h ^= h >> _U64(33)
    h *= _U64(0xC4CEB9FE1A85EC53)
    h ^= h >> _U64(33)
    return h


def ngrams(w: Words, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash of every word n-gram and the index of the text it is in, in text order.

    Texts shorter than ``n`` words have no n-grams.
    """
    lengths = w.lengths
    counts = np.maximum(lengths - n + 1, 0)
    total = int(counts.sum())
    text_of = np.repeat(np.arange(len(lengths), dtype=np.int64), counts)
    if total == 0:
        return np.zeros(0, dtype=_U64), text_of
    first = np.cumsum(counts) - counts
    starts = w.offsets[:-1][text_of] + (np.arange(total, dtype=np.int64) - first[text_of])
    x = w.hashes
    span = len(x) - n + 1
    h = x[:span].copy()
    for k in range(1, n):
        h *= _MUL
        h += x[k : k + span]
    return mix64(h[starts]), text_of


def ngram_starts(w: Words, n: int) -> np.ndarray:
    """Global word position of every n-gram :func:`ngrams` returns (same order)."""
    lengths = w.lengths
    counts = np.maximum(lengths - n + 1, 0)
    text_of = np.repeat(np.arange(len(lengths), dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    return w.offsets[:-1][text_of] + (np.arange(int(counts.sum()), dtype=np.int64) - first[text_of])


def distinct_pairs(h: np.ndarray, text_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(text, hash)`` pairs, sorted by text then hash, with the index of a first occurrence."""
    if len(h) == 0:
        return h, text_of, np.zeros(0, dtype=np.int64)
    order = np.lexsort((h, text_of))
    hs, ts = h[order], text_of[order]
    keep = np.ones(len(hs), dtype=bool)
    keep[1:] = (hs[1:] != hs[:-1]) | (ts[1:] != ts[:-1])
    return hs[keep], ts[keep], order[keep]


def doc_freq(h: np.ndarray, text_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct hashes, how many texts each occurs in, and one position where each occurs.

    >>> h = np.array([5, 5, 7, 5], dtype=np.uint64); t = np.array([0, 0, 0, 1])
    >>> [a.tolist() for a in doc_freq(h, t)]
    [[5, 7], [2, 1], [0, 2]]
    """
    hs, _, first = distinct_pairs(h, text_of)
    uniq, idx, counts = np.unique(hs, return_index=True, return_counts=True)
    return uniq, counts, first[idx]


def distinct_counts(h: np.ndarray, text_of: np.ndarray, n_texts: int) -> np.ndarray:
    """Number of distinct hashes per text, at most one low: 40 bits of each hash are compared.

    The packed single sort is several times faster than an exact lexsort; a 40-bit
    collision inside one text only lowers that text's count by one.
    """
    if len(h) == 0:
        return np.zeros(n_texts, dtype=np.int64)
    if n_texts >= 1 << 24:  # pragma: no cover - batches are far smaller
        return np.bincount(distinct_pairs(h, text_of)[1], minlength=n_texts)
    key = (text_of.astype(_U64) << _U64(40)) | (h >> _U64(24))
    key.sort()
    keep = np.ones(len(key), dtype=bool)
    keep[1:] = key[1:] != key[:-1]
    return np.bincount((key[keep] >> _U64(40)).astype(np.int64), minlength=n_texts)


class HashSet:
    """A sorted array of distinct hashes with a bitmap in front for fast negative lookups.

    >>> s = HashSet(np.array([3, 9, 4], dtype=np.uint64))
    >>> s.find(np.array([4, 5, 9], dtype=np.uint64)).tolist()
    [1, -1, 2]
    """

    def __init__(self, hashes: np.ndarray):
        self.keys = np.unique(hashes)
        bits = 1 << max(16, min(26, int(len(self.keys) * 32).bit_length()))
        self._mask = _U64(bits - 1)
        self._bitmap = np.zeros(bits, dtype=bool)
        self._bitmap[(self.keys & self._mask).astype(np.int64)] = True

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, h: np.ndarray) -> np.ndarray:
        """Index of each hash in ``keys``, or -1."""
        out = np.full(len(h), -1, dtype=np.int64)
        if len(self.keys) == 0 or len(h) == 0:
            return out
        maybe = np.flatnonzero(self._bitmap[(h & self._mask).astype(np.int64)])
        if len(maybe):
            cand = h[maybe]
            pos = np.searchsorted(self.keys, cand)
            pos[pos == len(self.keys)] = 0
            hit = self.keys[pos] == cand
            out[maybe[hit]] = pos[hit]
        return out


class Postings:
    """Hash -> ids of the items containing it (CSR layout), built from distinct (item, hash) pairs."""

    def __init__(self, h: np.ndarray, item: np.ndarray):
        self.set = HashSet(h)
        idx = np.searchsorted(self.set.keys, h)
        order = np.argsort(idx, kind="stable")
        self.items = item[order].astype(np.int64)
        self.ptr = np.zeros(len(self.set.keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(idx, minlength=len(self.set.keys)), out=self.ptr[1:])

    def expand(self, key_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each key index, the items under it: (which input row, item id)."""
        starts = self.ptr[key_idx]
        counts = self.ptr[key_idx + 1] - starts
        row = np.repeat(np.arange(len(key_idx), dtype=np.int64), counts)
        first = np.cumsum(counts) - counts
        pos = starts[row] + (np.arange(int(counts.sum()), dtype=np.int64) - first[row])
        return row, self.items[pos]
