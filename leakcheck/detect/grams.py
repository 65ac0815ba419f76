"""Tokens, token n-grams and their document frequencies, hashed for a whole batch at once.

Tokens of :func:`leakcheck.canon.normalize`'d text are the ``\\w+`` runs (words), every Han
ideograph and kana character (Chinese and Japanese have no spaces), and every other
non-space character (operators and punctuation: ``x == 0`` and ``x < 0`` differ); a run of
four or more of one such character (``-----``, ``=====``) is a single token, whatever its
length. Each token becomes a 64-bit hash computed on the bytes of the whole batch at once; an
n-gram hash is a polynomial combination of its ``n`` token hashes, computed for every
position of the concatenated batch with ``n`` vectorized multiply-adds, then mixed. Nothing
here loops over tokens or n-grams in Python (except for the rare token over 64 bytes).

>>> w = words(["The cat sat on the mat.", "", "the CAT sat"])
>>> w.text(1, 3)
'cat sat on'
>>> w.offsets.tolist()
[0, 7, 7, 10]
>>> h, text_of = ngrams(w, 3)
>>> text_of.tolist()
[0, 0, 0, 0, 0, 2]
>>> bool(h[0] == h[5])  # "the cat sat" in text 0 and text 2
True
>>> tokens("if x<=0: return -1  # ======")
['if', 'x', '<', '=', '0', ':', 'return', '-', '1', '#', '====']
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash

from .._compiled import compiled
from ..canon import normalize


_U64 = np.uint64
MUL = _MUL = _U64(0x9E3779B97F4A7C15)  # odd: x -> x * MUL is a bijection mod 2**64


@dataclass(frozen=True)
class Words:
    """Word hashes of a list of texts, concatenated; text ``i`` is ``hashes[offsets[i]:offsets[i+1]]``.

    ``blob``/``starts``/``ends`` locate each word in the (lower-cased) UTF-8 bytes, to show n-grams.
    """

    hashes: np.ndarray  # uint64
    offsets: np.ndarray  # int64, len(texts) + 1
    blob: bytes = b""
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def text(self, start: int, n: int) -> str:
        """The ``n`` words from global word position ``start``, as they appear in the text."""
        assert self.starts is not None and self.ends is not None
        raw = self.blob[int(self.starts[start]) : int(self.ends[start + n - 1])].decode("utf-8", "replace")
        return " ".join(raw.split())


_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=_U64)
_CHUNK_BYTES = 1 << 22
#: Tokens longer than this are hashed one by one with xxh3 (linear in their length); shorter
#: ones 8 bytes per vectorized step. A 10 MB token took a million steps.
_VECTOR_MAX = 64
#: A run of this many or more of one symbol character is one token, hashed as this many.
_RUN = 4
# Scripts written without spaces: each Han ideograph or kana is a word of its own, so a
# Chinese or Japanese text has n-grams at all (as one ``\w+`` run a whole clause would be a
# single word, and an unpunctuated question shorter than ``n`` words: never matchable).
_CJK = "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"


_SYMBOL = "[^\\w\\s\\x00-\\x1f\\x7f]"
_SIMPLE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|{_SYMBOL}")
_A_RUN = re.compile(f"({_SYMBOL})\\1{{{_RUN - 1}}}")
_WIDE_RUN = re.compile(f"([^\\w\\s\\x00-\\x7f])\\1{{{_RUN - 1}}}")


@functools.cache
def _marks() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Combining marks (Devanagari vowel signs are not ``\\w``), and the full token pattern that keeps them in words."""
    marks = [c for c in range(0x20000) if unicodedata.category(chr(c))[0] == "M"] + list(range(0xE0100, 0xE01F0))
    runs: list[list[int]] = []
    for c in marks:
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    m = "".join(f"{chr(a)}-{chr(b)}" if b > a else chr(a) for a, b in runs)
    full = re.compile(f"[{_CJK}]|(?:[^\\W{_CJK}]|[{m}])+|({_SYMBOL})\\1{{{_RUN - 1},}}|{_SYMBOL}")
    # the quick test: a class within the BMP compiles to a bitmap (with astral ranges sre
    # walks the ranges, 20x slower); any astral character takes the full pattern
    bmp = "".join(f"{chr(a)}-{chr(b)}" if b > a else chr(a) for a, b in runs if b <= 0xFFFF)
    return re.compile(f"[{bmp}]|[\\U00010000-\\U0010ffff]"), full


def _spaced(text: str) -> str:
    """A non-ASCII text whose byte tokens (``_words_ascii``) are its :func:`tokens`.

    The byte tokenizer reads every byte of a multi-byte character as a word byte, so only
    the non-ASCII characters that are not word characters need spaces put around them (a
    symbol such as ``×``, each CJK character) or to become a space (non-ASCII white space).
    Only those characters are visited: nearly all of such a text is ASCII.
    """
    t = normalize(text)
    if _WIDE_RUN.search(t) is None and _marks()[0].search(t) is None:
        return _NON_ASCII.sub(_wide_char, t)
    return " ".join(tokens(t))


_NON_ASCII = re.compile("[^\x00-\x7f]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")


def _wide_char(m: re.Match[str]) -> str:
    return "".join(map(_wide_token, m[0]))


@functools.lru_cache(maxsize=1 << 14)
def _wide_token(c: str) -> str:
    """One non-ASCII character as the byte tokenizer must see it (see :func:`_spaced`)."""
    if c.isspace():
        return " "
    return f" {c} " if _CJK_CHAR.match(c) or not c.isalnum() else c


def tokens(text: str) -> list[str]:
    """The tokens of one text, as :func:`words` hashes them (a reference, and for non-ASCII texts)."""
    t = normalize(text)
    has_marks, full = _marks()
    if _A_RUN.search(t) is None and has_marks.search(t) is None:
        return _SIMPLE.findall(t)  # nearly every text: one C-level pass
    return [m[1] * _RUN if m[1] else m[0] for m in full.finditer(t)]


def words(texts: Sequence[str | None]) -> Words:
    """Tokenize and hash a batch of texts; ``None`` counts as a text without tokens.

    ASCII texts, nearly all of them, are lower-cased, split and hashed on their bytes in
    NumPy; the others are first reduced to their :func:`tokens` joined by spaces. A token's
    hash is a polynomial hash of its bytes, mixed.
    """
    parts = ["" if t is None else t for t in texts]
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return Words(np.zeros(0, dtype=_U64), np.zeros(1, dtype=np.int64), b"", z, z)
    odd = [i for i, t in enumerate(parts) if not t.isascii()]
    nbytes = [len(t) for t in parts]
    if odd:
        for i in odd:
            parts[i] = t = _spaced(parts[i])
            nbytes[i] = len(t.encode("utf-8"))
    # Bounded chunks keep the temporary arrays small.
    sizes = np.asarray(nbytes, dtype=np.int64) + 1
    ends = np.cumsum(sizes)
    cuts = np.searchsorted(ends, np.arange(_CHUNK_BYTES, int(ends[-1]) if len(ends) else 0, _CHUNK_BYTES), side="right")
    bounds = sorted({0, len(parts), *cuts.tolist()})
    chunks = [_words_ascii(parts[a:b], sizes[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    if len(chunks) == 1:
        return chunks[0]
    hashes: list[np.ndarray] = []
    offsets: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
    starts: list[np.ndarray] = []
    word_ends: list[np.ndarray] = []
    blobs: list[bytes] = []
    nword = nbyte = 0
    for c in chunks:
        assert c.starts is not None and c.ends is not None
        hashes.append(c.hashes)
        offsets.append(c.offsets[1:] + nword)
        starts.append(c.starts + nbyte)
        word_ends.append(c.ends + nbyte)
        blobs.append(c.blob)
        nword += len(c.hashes)
        nbyte += len(c.blob) + 1
    return Words(np.concatenate(hashes), np.concatenate(offsets), b"\x00".join(blobs),
                 np.concatenate(starts), np.concatenate(word_ends))


def _words_ascii(parts: list[str], sizes: np.ndarray) -> Words:
    """Tokens of texts that are ASCII or already reduced to space-separated tokens.

    A token is read as little-endian 8-byte integers, combined and mixed. Token boundaries
    come from byte classes: word bytes (``\\w`` in ASCII, or any byte of a multi-byte
    character), symbol bytes (the other printable ASCII characters, one token each, or one
    per run of ``_RUN`` or more equal ones) and the rest (spaces, control characters).
    The compiled kernel (``leakcheck._kernels``, built where a C compiler is) does it in one
    pass over the bytes; :func:`_words_numpy` is the same in NumPy passes.
    """
    blob = "\x00".join(parts).encode("utf-8")
    # text i occupies bytes [text_start[i], text_start[i] + size[i] - 1), one separator after it
    text_start = np.zeros(len(parts), dtype=np.int64)
    np.cumsum(sizes[:-1], out=text_start[1:])
    kernel = _kernel()
    if kernel is None:
        return _words_numpy(blob, text_start, len(parts))
    hashes, starts, ends, offsets, long = kernel.tokens(blob, text_start)
    w = Words(np.frombuffer(hashes, dtype=_U64), np.frombuffer(offsets, dtype=np.int64), blob,
              np.frombuffer(starts, dtype=np.int64), np.frombuffer(ends, dtype=np.int64))
    for i in long:  # tokens over _VECTOR_MAX bytes: xxh3 of their lower-cased bytes, as below
        assert w.starts is not None and w.ends is not None
        a, e = int(w.starts[i]), int(w.ends[i])
        w.hashes[i] = mix64(np.array([xxhash.xxh3_64_intdigest(blob[a:e].lower()) ^ ((e - a) * int(_MUL) & _M64)], dtype=_U64))[0]
    return w


_M64 = (1 << 64) - 1


def _kernel() -> Any:
    """The compiled kernels (``leakcheck/_kernels.c``), or ``None`` (no C compiler at install, or ``LEAKCHECK_NO_KERNEL=1``)."""
    return compiled("_kernels")


def _words_numpy(blob: bytes, text_start: np.ndarray, n_texts: int) -> Words:
    """:func:`_words_ascii` in NumPy passes: one unaligned 8-byte load per 8 bytes of a token."""
    b = np.frombuffer(blob, dtype=np.uint8)
    n = len(b)
    # comparisons beat a table lookup
    low = b | np.uint8(32)
    w = ((low - np.uint8(97)) < 26) | ((b - np.uint8(48)) < 10) | (b == 95) | (b >= 128)
    sym = ((b - np.uint8(33)) < 94) & ~w
    starts, ends, run = _token_bounds(b, w, sym)
    padded = np.zeros(n + 8, dtype=np.uint8)
    padded[:n] = b | (((b - np.uint8(65)) < 26).view(np.uint8) << np.uint8(5))  # A-Z -> a-z
    at = np.ndarray((n + 1,), dtype="<u8", buffer=padded, strides=(1,))  # 8 bytes from any offset
    lengths = np.where(run, _RUN, ends - starts).astype(_U64)
    h = at[starts] & _LOW_BYTES[np.minimum(lengths, 8)]
    long = np.flatnonzero((lengths > 8) & (lengths <= _VECTOR_MAX))
    k = 8
    while len(long):
        rest = lengths[long] - _U64(k)
        h[long] = mix64(h[long]) + (at[starts[long] + k] & _LOW_BYTES[np.minimum(rest, 8)])
        long = long[rest > 8]
        k += 8
    for i in np.flatnonzero(lengths > _VECTOR_MAX).tolist():
        h[i] = xxhash.xxh3_64_intdigest(padded[starts[i] : ends[i]].tobytes())
    hashes = mix64(h ^ (lengths * _MUL))
    offsets = np.empty(n_texts + 1, dtype=np.int64)
    offsets[:-1] = np.searchsorted(starts, text_start)
    offsets[-1] = len(starts)
    return Words(hashes, offsets, blob, starts, ends)


def _token_bounds(b: np.ndarray, w: np.ndarray, sym: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start and end byte of every token, in order, and whether it is a run of one symbol.

    Tokens never overlap and are never empty, so their starts and their ends, each read
    off a byte mask, come out in the same order. A byte is in a long run when it and the
    three before it (or one of the three after it and its predecessors) are one symbol.
    """
    n = len(b)
    same = np.zeros(n + 1, dtype=bool)  # same[i]: byte i is a symbol equal to byte i - 1
    np.logical_and(sym[1:], b[1:] == b[:-1], out=same[1:n])
    four = np.zeros(n + 3, dtype=bool)  # four[i]: bytes i-3 .. i are one symbol
    four[3:n] = same[3:n] & same[2 : n - 1] & same[1 : n - 2]
    run = four[:n] | four[1 : n + 1] | four[2 : n + 2] | four[3 : n + 3]
    start = np.zeros(n + 1, dtype=bool)
    end = np.zeros(n + 1, dtype=bool)
    start[:n] = w
    start[1:n] &= ~w[:-1]
    end[1:] = w
    end[1:n] &= ~w[1:]
    single = sym & ~run
    start[:n] |= single | (run & ~same[:n])
    end[1:] |= single | (run & ~same[1:])
    starts, ends = np.flatnonzero(start), np.flatnonzero(end)
    return starts, ends, run[starts]


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
    kernel = _kernel()
    if kernel is not None and n >= 1:
        h, text_of = kernel.ngrams(np.ascontiguousarray(w.hashes, dtype=_U64), np.ascontiguousarray(w.offsets, dtype=np.int64), n)
        return np.frombuffer(h, dtype=_U64), np.frombuffer(text_of, dtype=np.int64)
    return _ngrams_numpy(w, n)


def _ngrams_numpy(w: Words, n: int) -> tuple[np.ndarray, np.ndarray]:
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


def unique_counts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of an integer array and how often each occurs.

    ``np.sort`` of integers is several times faster than ``np.unique`` here; the stable sort
    (timsort) finds the runs of keys packed text-first, as most callers pack them.

    >>> [a.tolist() for a in unique_counts(np.array([3, 1, 3, 3]))]
    [[1, 3], [1, 3]]
    """
    if len(x) == 0:
        return x, np.zeros(0, dtype=np.int64)
    x = np.sort(x, kind="stable")
    first = np.empty(len(x), dtype=bool)
    first[0] = True
    np.not_equal(x[1:], x[:-1], out=first[1:])
    idx = np.flatnonzero(first)
    return x[idx], np.diff(np.append(idx, len(x)))


def distinct_pairs(h: np.ndarray, text_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(text, hash)`` pairs, sorted by text then hash, with the index of a first occurrence."""
    if len(h) == 0:
        return h, text_of, np.zeros(0, dtype=np.int64)
    kernel = _kernel()
    if kernel is not None:
        got = kernel.distinct_pairs(np.ascontiguousarray(h, dtype=_U64), np.ascontiguousarray(text_of, dtype=np.int64))
        if got is not None:  # None: text_of is not sorted
            return (np.frombuffer(got[0], dtype=_U64), np.frombuffer(got[1], dtype=np.int64),
                    np.frombuffer(got[2], dtype=np.int64))
    return _distinct_pairs_numpy(h, text_of)


def _distinct_pairs_numpy(h: np.ndarray, text_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.lexsort((h, text_of))
    hs, ts = h[order], text_of[order]
    keep = np.ones(len(hs), dtype=bool)
    keep[1:] = (hs[1:] != hs[:-1]) | (ts[1:] != ts[:-1])
    return hs[keep], ts[keep], order[keep]


def doc_freq(h: np.ndarray, text_of: np.ndarray, min_df: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hashes found in at least ``min_df`` texts: the hashes, their text counts, a position of each.

    The position is the first occurrence. A hash occurring fewer than ``min_df`` times in
    all cannot qualify, so a bucket count (one pass, no sort) rules most hashes out before
    the exact count sorts what is left: templates are rare, candidates few.

    >>> h = np.array([5, 5, 7, 5], dtype=np.uint64); t = np.array([0, 0, 0, 1])
    >>> [a.tolist() for a in doc_freq(h, t)]
    [[5, 7], [2, 1], [0, 2]]
    >>> [a.tolist() for a in doc_freq(h, t, 2)]
    [[5], [2], [0]]
    """
    pos = np.arange(len(h), dtype=np.int64)
    if min_df > 1 and len(h):
        bucket = (h & _U64(_BUCKETS - 1)).astype(np.int64)
        pos = pos[np.bincount(bucket, minlength=_BUCKETS)[bucket] >= min_df]
    hs, ts = h[pos], text_of[pos]
    order = np.lexsort((ts, hs))  # by hash, then text; stable: ties keep row order
    hs, ts, pos = hs[order], ts[order], pos[order]
    pair = np.ones(len(hs), dtype=bool)
    pair[1:] = (hs[1:] != hs[:-1]) | (ts[1:] != ts[:-1])
    hs, pos = hs[pair], pos[pair]
    new = np.ones(len(hs), dtype=bool)
    new[1:] = hs[1:] != hs[:-1]
    starts = np.flatnonzero(new)
    if len(starts) == 0:
        return hs.astype(_U64), np.zeros(0, dtype=np.int64), pos
    df = np.diff(np.append(starts, len(hs)))
    first = np.minimum.reduceat(pos, starts)
    keep = df >= min_df
    return hs[starts][keep].astype(_U64), df[keep].astype(np.int64), first[keep]


_BUCKETS = 1 << 20


def distinct_counts(h: np.ndarray, text_of: np.ndarray, n_texts: int) -> np.ndarray:
    """Number of distinct hashes per text, at most one low: 40 bits of each hash are compared.

    The packed single sort is several times faster than an exact lexsort; a 40-bit
    collision inside one text only lowers that text's count by one.
    """
    if len(h) == 0:
        return np.zeros(n_texts, dtype=np.int64)
    kernel = _kernel()
    if kernel is not None and n_texts < 1 << 24:
        # one small hash table per text; ``None`` when text_of is not sorted
        got = kernel.distinct(np.ascontiguousarray(h, dtype=_U64), np.ascontiguousarray(text_of, dtype=np.int64), n_texts)
        if got is not None:
            return np.frombuffer(got, dtype=np.int64)
    return _distinct_counts_numpy(h, text_of, n_texts)


def _distinct_counts_numpy(h: np.ndarray, text_of: np.ndarray, n_texts: int) -> np.ndarray:
    if n_texts >= 1 << 24:  # pragma: no cover - batches are far smaller
        return np.bincount(distinct_pairs(h, text_of)[1], minlength=n_texts)
    key = (text_of.astype(_U64) << _U64(40)) | (h >> _U64(24))
    key.sort(kind="stable")  # sorted by text already: timsort merges runs
    keep = np.ones(len(key), dtype=bool)
    keep[1:] = key[1:] != key[:-1]
    return np.bincount((key[keep] >> _U64(40)).astype(np.int64), minlength=n_texts)


def _index_dtype(n: int) -> type[np.signedinteger]:
    """The narrowest of int32/int64 holding indexes below ``n`` (halves the big tables)."""
    return np.int32 if n < 1 << 31 else np.int64


class HashSet:
    """Distinct hashes, sorted, with a bitmap in front for fast negative lookups and an
    open-addressing table (linear probing, at most half full) behind it.

    A lookup costs a bitmap test, then about two table probes for the hashes that pass it:
    several times cheaper than a binary search over a large ``keys`` array.

    >>> s = HashSet(np.array([3, 9, 4], dtype=np.uint64))
    >>> s.find(np.array([4, 5, 9], dtype=np.uint64)).tolist()
    [1, -1, 2]
    """

    def __init__(self, hashes: np.ndarray):
        self.keys = unique_counts(hashes)[0]
        bits = 1 << max(16, min(26, int(len(self.keys) * 32).bit_length()))
        self._mask = _U64(bits - 1)
        bitmap = np.zeros(bits, dtype=bool)
        bitmap[self.keys & self._mask] = True
        self._bitmap = np.packbits(bitmap, bitorder="little")  # a bit per slot: 8x less memory, fewer cache misses
        slots = 1 << max(4, (2 * len(self.keys)).bit_length())
        self._slot_mask = slots - 1
        # 0 marks an empty slot; a key that is 0 (a 1 in 2**64 chance) is looked up apart
        self._zero = int(np.searchsorted(self.keys, _U64(0))) if len(self.keys) and self.keys[0] == 0 else -1
        self._slot_key = np.zeros(slots, dtype=_U64)
        self._slot_idx = np.zeros(slots, dtype=_index_dtype(len(self.keys)))
        pending = np.flatnonzero(self.keys != 0)
        pos = self._home(self.keys)
        while len(pending):
            p = pos[pending]
            free = self._slot_key[p] == 0
            slot, first = np.unique(p[free], return_index=True)  # one key per free slot wins
            won = pending[free][first]
            self._slot_idx[slot] = won
            self._slot_key[slot] = self.keys[won]
            placed = np.zeros(len(self.keys), dtype=bool)
            placed[won] = True
            pending = pending[~placed[pending]]
            pos[pending] = (pos[pending] + 1) & self._slot_mask

    def _home(self, h: np.ndarray) -> np.ndarray:
        return ((h >> _U64(32)) & _U64(self._slot_mask)).astype(np.int64)

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, h: np.ndarray) -> np.ndarray:
        """Index of each hash in ``keys``, or -1."""
        if len(self.keys) == 0 or len(h) == 0:
            return np.full(len(h), -1, dtype=np.int64)
        kernel = _kernel()
        if kernel is not None:
            return np.frombuffer(kernel.find(self._slot_key, self._slot_idx, self._slot_idx.itemsize, self._slot_mask,
                                             self._bitmap, int(self._mask), self._zero, np.ascontiguousarray(h, dtype=_U64)),
                                 dtype=np.int64)
        return self._find_numpy(h)

    def _find_numpy(self, h: np.ndarray) -> np.ndarray:
        out = np.full(len(h), -1, dtype=np.int64)
        b = h & self._mask
        idx = np.flatnonzero((self._bitmap[b >> _U64(3)] >> (b & _U64(7)).astype(np.uint8)) & 1)
        want = h[idx]
        if self._zero >= 0:
            out[idx[want == 0]] = self._zero
        idx, want = idx[want != 0], want[want != 0]  # 0 is the empty slot's key: not probed
        p = self._home(want)
        while len(idx):
            at = self._slot_key[p]
            match = at == want
            out[idx[match]] = self._slot_idx[p[match]]
            go_on = (at != 0) & ~match
            idx, want, p = idx[go_on], want[go_on], (p[go_on] + 1) & self._slot_mask
        return out


class Postings:
    """Hash -> ids of the items containing it (CSR layout), built from distinct (item, hash) pairs."""

    def __init__(self, h: np.ndarray, item: np.ndarray):
        # one stable sort gives the keys, the lists (items in input order) and their bounds
        order = np.argsort(h, kind="stable")
        hs = h[order]
        first = np.ones(len(hs), dtype=bool)
        np.not_equal(hs[1:], hs[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        self.set = HashSet(hs[starts])
        self.items = item[order].astype(_index_dtype(int(item.max()) + 1 if len(item) else 0))
        self.ptr = np.append(starts, len(hs)).astype(np.int64)

    def expand(self, key_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each key index, the items under it: (which input row, item id)."""
        starts = self.ptr[key_idx]
        counts = self.ptr[key_idx + 1] - starts
        row = np.repeat(np.arange(len(key_idx), dtype=np.int64), counts)
        first = np.cumsum(counts) - counts
        pos = starts[row] + (np.arange(int(counts.sum()), dtype=np.int64) - first[row])
        return row, self.items[pos]
