"""The ``exact`` and ``normalized`` levels: equal canonical text, looked up in a dict.

Keys are 128-bit hashes of the texts: the index holds no eval text (see :class:`_Index`).

The normalized level first looks up a *prefix key*: the first :data:`KEY_CHARS` characters
of the normalized text. That key can be computed from about the first :data:`PREFIX_RAW`
raw characters alone, so a long train text that cannot match costs a
short normalization, not a full one (normalizing all of a 900-character text takes ~8 µs,
its head ~1 µs). Only a key hit normalizes the whole text and compares it in full.

Before that, an ASCII train text must pass a cheaper test: its first five words, lower-cased
(:func:`word_text`), must be those of a normalized eval text. It needs no normalization, and
texts with equal normalized forms have equal word texts, so the test never drops a match.

>>> from leakcheck.records import Record
>>> d = TextMatchDetector("normalized", [Record("e0", 0, "What is  2+2?", "Four")], min_cross_chars=20)
>>> [(m.eval_field, m.train_field, m.score) for m in d.probe([Record("t0", 0, "what is 2+2?", "four")])]
[('prompt', 'prompt', 1.0), ('target', 'target', 1.0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Sequence

import xxhash

from ..canon import may_have_latex, normalize, normalize_no_latex
from ..fingerprint import text_key
from ..io.chat_lines import LineFilter, text_hash
from ..records import Record
from .base import Match

if TYPE_CHECKING:  # numpy only to save or load an index: a scan starts without it
    import numpy as np

PREFIX_RAW = 96
KEY_CHARS = 48
KEY_WORDS = 5


def word_text(text: str) -> str:
    """The first :data:`KEY_WORDS` words of ``text``, lower-cased and joined by spaces; words as ``str.split()`` splits them.

    For an ASCII ``text``, ``word_text(text) == word_text(normalize(text))``: ASCII
    normalization only lower-cases letters (some of them: LaTeX keeps its case) and collapses
    whitespace, which changes neither where the words are nor their lower-cased form. So two
    texts whose normalized forms are equal have equal word texts, if the train text is ASCII
    (non-ASCII texts skip the test: NFKC and case folding can change words).

    >>> word_text("  What IS  $X$,\tsir? ") == word_text(normalize("  What IS  $X$,\tsir? ")) == "what is $x$, sir?"
    True
    """
    # maxsplit leaves the rest in one piece: only the first words are cut out
    return " ".join(text.split(None, KEY_WORDS)[:KEY_WORDS]).lower()


def word_key(text: str) -> int:
    """:func:`word_text` as a 64-bit hash: what a saved index keeps (no eval text)."""
    return xxhash.xxh3_64_intdigest(word_text(text).encode("utf-8", "surrogatepass"))


def prefix_key(text: str) -> str:
    """``normalize(text)[:KEY_CHARS]``, computed from the head of ``text`` where that is exact.

    The head is cut at a space followed by an ASCII character: no Unicode normalization or
    case folding acts across such a boundary, and the last word of the head is whole, so
    ``normalize(head)`` is a prefix of ``normalize(text)``. A head that may hold LaTeX (see
    :func:`~leakcheck.canon.may_have_latex`) is used only when the whole text cannot: it may
    end inside math, whose case is kept. Where no such cut exists, the whole text is normalized.

    >>> t = "Some   LONG text, café " * 40
    >>> prefix_key(t) == normalize(t)[:KEY_CHARS]
    True
    """
    n = len(text)
    if n > PREFIX_RAW:
        k = text.find(" ", PREFIX_RAW)
        if 0 < k < n - 1 and text[k + 1] < "\x80":
            h = text[:k]
            # the inline checks spare most heads the call
            plain = ("$" not in h and "\\" not in h and h.isascii()) or not may_have_latex(h) or not may_have_latex(text)
            head = normalize_no_latex(h) if plain else ""
            if len(head) >= KEY_CHARS:
                return head[:KEY_CHARS]
    return normalize(text)[:KEY_CHARS]


class _Index:
    """Text hash -> eval indexes, for one field of the eval side at one level.

    Keys are 128-bit hashes of the texts (:func:`leakcheck.fingerprint.text_key`), so the
    index holds no eval text and can be saved and published; a false hit has probability
    about 2**-128 per comparison.
    """

    __slots__ = ("full", "keys", "words", "word_texts", "fast")

    def __init__(self, full: dict[int, list[int]] | None = None, keys: set[int] | None = None,
                 words: set[int] | None = None, fast: set[int] | None = None) -> None:
        self.full: dict[int, list[int]] = full if full is not None else {}
        self.keys: set[int] = keys if keys is not None else set()
        #: word keys of the normalized texts; ``None`` (an index saved without them): no word test
        self.words: set[int] | None = words if words is not None else set()
        #: the word texts themselves, in memory only while the eval texts are (not saved, not loaded)
        self.word_texts: set[str] | None = set() if full is None else None
        #: what the C chat reader tests (:func:`~leakcheck.io.chat_lines.text_hash`): of each text
        #: (exact), of each normalized text's word text (normalized); ``None``: an index saved without
        self.fast: set[int] | None = fast if fast is not None else (set() if full is None else None)

    def add(self, k: "_TextKeys", i: int) -> None:
        self.full.setdefault(k.full, []).append(i)
        if k.prefix is not None:
            self.keys.add(k.prefix)
        if self.words is not None and k.word is not None:
            self.words.add(k.word)
        if self.word_texts is not None and k.word_text is not None:
            self.word_texts.add(k.word_text)
        if self.fast is not None:
            self.fast.add(k.fast)

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The index as flat arrays: hash halves, eval index lists, prefix keys, word keys."""
        import numpy as np

        items = sorted(self.full.items())
        lengths = np.array([len(v) for _, v in items], dtype=np.int64)
        return {
            f"{name}.key": _split128([k for k, _ in items]),
            f"{name}.ptr": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            f"{name}.idx": np.array([i for _, v in items for i in v], dtype=np.int64),
            f"{name}.prefix": _split128(sorted(self.keys)),
            **({f"{name}.words": np.array(sorted(self.words), dtype=np.uint64)} if self.words is not None else {}),
            **({f"{name}.fast": np.array(sorted(self.fast), dtype=np.uint64)} if self.fast is not None else {}),
        }

    @classmethod
    def from_arrays(cls, name: str, a: dict[str, np.ndarray]) -> "_Index":
        keys, ptr, idx = _join128(a[f"{name}.key"]), a[f"{name}.ptr"].tolist(), a[f"{name}.idx"].tolist()
        full = {k: idx[ptr[j] : ptr[j + 1]] for j, k in enumerate(keys)}
        words, fast = a.get(f"{name}.words"), a.get(f"{name}.fast")
        out = cls(full, set(_join128(a[f"{name}.prefix"])), None if words is None else set(words.tolist()),
                  None if fast is None else set(fast.tolist()))
        if words is None:  # an index saved before word keys: every ASCII text takes the prefix test
            out.words = None
        return out


class _TextKeys(NamedTuple):
    """What the indexes of one level keep of one eval text, computed once for the index of its
    field and the crossed one: its key, and (normalized) its prefix key, word key and word text;
    ``fast``: :func:`~leakcheck.io.chat_lines.text_hash` of the text (exact) or of its word text."""

    full: int
    fast: int
    prefix: int | None = None
    word: int | None = None
    word_text: str | None = None

    @classmethod
    def of(cls, text: str, normalized: bool) -> "_TextKeys":
        if not normalized:
            return cls(text_key(text), text_hash(text.encode("utf-8", "surrogatepass")))
        n = normalize(text)
        w = word_text(n)
        return cls(text_key(n), text_hash(w.encode("utf-8", "surrogatepass")), text_key(prefix_key(text)), word_key(n), w)


def _union(a: set[Any] | None, b: set[Any] | None) -> set[Any] | None:
    return None if a is None or b is None else a | b


def _split128(keys: list[int]) -> np.ndarray:
    """128-bit ints as an (n, 2) uint64 array (numpy has no 128-bit integers)."""
    import numpy as np

    out = np.zeros((len(keys), 2), dtype=np.uint64)
    for j, k in enumerate(keys):
        out[j, 0], out[j, 1] = k >> 64, k & 0xFFFFFFFFFFFFFFFF
    return out


def _join128(a: np.ndarray) -> list[int]:
    return [(int(hi) << 64) | int(lo) for hi, lo in a.tolist()]


_NAMES = ("prompts", "targets", "cross_targets", "cross_prompts")


class TextMatchDetector:
    """Equality of canonical (``exact``) or normalized (``normalized``) text.

    Cross-field matches (an eval target equal to a train prompt) are looked up only for
    texts of at least ``min_cross_chars`` characters: a short answer such as "18" equal to
    a whole train prompt says nothing. Built once from the eval records, never changed.
    """

    def __init__(self, level: str, evals: Sequence[Record], min_cross_chars: int, _indexes: tuple[_Index, ...] | None = None):
        self.level = level
        self._norm = level == "normalized"
        self.min_cross_chars = min_cross_chars
        if _indexes is not None:
            self.prompts, self.targets, self.cross_targets, self.cross_prompts = _indexes
        else:
            self.prompts, self.targets = _Index(), _Index()
            self.cross_targets, self.cross_prompts = _Index(), _Index()
            for i, r in enumerate(evals):
                k = _TextKeys.of(r.prompt, self._norm)
                self.prompts.add(k, i)
                if len(r.prompt) >= min_cross_chars:
                    self.cross_prompts.add(k, i)
                if r.target is not None:
                    k = _TextKeys.of(r.target, self._norm)
                    self.targets.add(k, i)
                    if len(r.target) >= min_cross_chars:
                        self.cross_targets.add(k, i)
        # prefix keys a train prompt / train target can hit (normalized level only)
        self._keys_p = self.prompts.keys | self.cross_targets.keys
        self._keys_t = self.targets.keys | self.cross_prompts.keys
        # the word test: on the word texts where this process has them, else on their hashes
        self._word: Callable[[str], Any] = word_text
        self._words_p: set[Any] | None = _union(self.prompts.word_texts, self.cross_targets.word_texts)
        self._words_t: set[Any] | None = _union(self.targets.word_texts, self.cross_prompts.word_texts)
        if self._words_p is None or self._words_t is None:
            self._word = word_key
            self._words_p = _union(self.prompts.words, self.cross_targets.words)
            self._words_t = _union(self.targets.words, self.cross_prompts.words)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Plain data to save: settings and arrays of hashes (no text)."""
        arrays: dict[str, np.ndarray] = {}
        for name in _NAMES:
            arrays.update(getattr(self, name).arrays(name))
        return {"min_cross_chars": self.min_cross_chars}, arrays

    @classmethod
    def from_state(cls, level: str, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> "TextMatchDetector":
        idx = tuple(_Index.from_arrays(n, arrays) for n in _NAMES)
        return cls(level, (), int(meta["min_cross_chars"]), _indexes=idx)

    @classmethod
    def concat(cls, parts: Sequence["TextMatchDetector"], sizes: Sequence[int]) -> "TextMatchDetector":
        """One index over several eval sets: part ``k``'s eval indexes shifted by the sizes before it."""
        idx = []
        for name in _NAMES:
            merged = _Index()
            offset = 0
            for p, n in zip(parts, sizes):
                src = getattr(p, name)
                for key, ids in src.full.items():
                    merged.full.setdefault(key, []).extend(i + offset for i in ids)
                merged.keys |= src.keys
                merged.words = _union(merged.words, src.words)
                merged.word_texts = _union(merged.word_texts, src.word_texts)
                merged.fast = _union(merged.fast, src.fast)
                offset += n
            idx.append(merged)
        return cls(parts[0].level, (), parts[0].min_cross_chars, _indexes=tuple(idx))

    def line_filter(self) -> LineFilter | None:
        """The train texts this level could match, as the C chat reader tests them; ``None``: any text."""
        P, T, XT, XP = self.prompts.fast, self.targets.fast, self.cross_targets.fast, self.cross_prompts.fast
        if P is None or T is None or XT is None or XP is None:
            return None
        if not self._norm:
            return LineFilter(full_p=frozenset(P | XT), full_t=frozenset(T | XP))
        if self._words_p is None or self._words_t is None:  # no word test: every ASCII text is looked up
            return None
        return LineFilter(words_p=frozenset(P | XT), words_t=frozenset(T | XP), words=True, nonascii=True)

    def with_learned(self, learned: Any) -> "TextMatchDetector":
        return self  # nothing to learn from train (the registry entry has no learn)

    def probe(self, batch: Sequence[Record], stats: dict[str, int] | None = None) -> Iterator[Match]:
        return self._probe_normalized(batch) if self._norm else self._probe_exact(batch)

    def _probe_exact(self, batch: Sequence[Record]) -> Iterator[Match]:
        P, T = self.prompts.full, self.targets.full
        XT, XP = self.cross_targets.full, self.cross_prompts.full
        for pos, r in enumerate(batch):
            p = text_key(r.prompt)
            if p in P or p in XT:
                yield from _matches(pos, P.get(p), XT.get(p), "prompt")
            if r.target is not None:
                t = text_key(r.target)
                if t in T or t in XP:
                    yield from _matches(pos, T.get(t), XP.get(t), "target")

    def _probe_normalized(self, batch: Sequence[Record]) -> Iterator[Match]:
        P, T, XT, XP = self.prompts, self.targets, self.cross_targets, self.cross_prompts
        keys_p, keys_t = self._keys_p, self._keys_t
        words_p, words_t, word = self._words_p, self._words_t, self._word
        for pos, r in enumerate(batch):
            p = r.prompt
            if (words_p is None or not p.isascii() or word(p) in words_p) and text_key(prefix_key(p)) in keys_p:
                n = text_key(normalize(p))
                yield from _matches(pos, P.full.get(n), XT.full.get(n), "prompt")
            t = r.target
            if t is not None and (words_t is None or not t.isascii() or word(t) in words_t) and text_key(prefix_key(t)) in keys_t:
                n = text_key(normalize(t))
                yield from _matches(pos, T.full.get(n), XP.full.get(n), "target")

    def parameters(self) -> dict[str, Any]:
        if self.level == "exact":
            return {"method": "byte-identical canonical text"}
        return {"method": "identical after NFKC, typographic quotes/dashes to ASCII, case folding outside LaTeX math, "
                           "whitespace collapsing, removal of invisible (default-ignorable) characters"}

    def notes(self) -> list[str]:
        return []


def _matches(pos: int, same: list[int] | None, cross: list[int] | None, train_field: str) -> Iterator[Match]:
    """Matches of one train field: same-field hits, then crossed-field hits."""
    other = "target" if train_field == "prompt" else "prompt"
    for e in same or ():
        yield Match(pos, e, train_field, train_field, 1.0)
    for e in cross or ():
        yield Match(pos, e, other, train_field, 1.0)
