"""The ``exact`` and ``normalized`` levels: equal canonical text, looked up in a dict.

Keys are the texts themselves, so a hit is string equality, never a hash collision.

The normalized level first looks up a *prefix key*: the first :data:`KEY_CHARS` characters
of the normalized text. That key can be computed from about the first :data:`PREFIX_RAW`
raw characters alone, so a long train text that cannot match costs a
short normalization, not a full one (normalizing all of a 900-character text takes ~8 µs,
its head ~1 µs). Only a key hit normalizes the whole text and compares it in full.

>>> from leakcheck.records import Record
>>> d = TextMatchDetector("normalized", [Record("e0", 0, "What is  2+2?", "Four")], min_cross_chars=20)
>>> [(m.eval_field, m.train_field, m.score) for m in d.probe([Record("t0", 0, "what is 2+2?", "four")])]
[('prompt', 'prompt', 1.0), ('target', 'target', 1.0)]
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from ..canon import may_have_latex, normalize, normalize_no_latex
from ..records import Record
from .base import Match

PREFIX_RAW = 96
KEY_CHARS = 48


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
    """Text -> eval indexes, for one field of the eval side at one level."""

    __slots__ = ("full", "keys")

    def __init__(self) -> None:
        self.full: dict[str, list[int]] = {}
        self.keys: set[str] = set()

    def add(self, text: str, i: int, normalized: bool) -> None:
        if normalized:
            self.full.setdefault(normalize(text), []).append(i)
            self.keys.add(prefix_key(text))
        else:
            self.full.setdefault(text, []).append(i)


class TextMatchDetector:
    """Equality of canonical (``exact``) or normalized (``normalized``) text.

    Cross-field matches (an eval target equal to a train prompt) are looked up only for
    texts of at least ``min_cross_chars`` characters: a short answer such as "18" equal to
    a whole train prompt says nothing.
    """

    def __init__(self, level: str, evals: Sequence[Record], min_cross_chars: int):
        self.level = level
        self._norm = level == "normalized"
        self.prompts, self.targets = _Index(), _Index()
        self.cross_targets, self.cross_prompts = _Index(), _Index()
        for i, r in enumerate(evals):
            self.prompts.add(r.prompt, i, self._norm)
            if len(r.prompt) >= min_cross_chars:
                self.cross_prompts.add(r.prompt, i, self._norm)
            if r.target is not None:
                self.targets.add(r.target, i, self._norm)
                if len(r.target) >= min_cross_chars:
                    self.cross_targets.add(r.target, i, self._norm)
        # prefix keys a train prompt / train target can hit (normalized level only)
        self._keys_p = self.prompts.keys | self.cross_targets.keys
        self._keys_t = self.targets.keys | self.cross_prompts.keys

    def probe(self, batch: Sequence[Record]) -> Iterator[Match]:
        return self._probe_normalized(batch) if self._norm else self._probe_exact(batch)

    def _probe_exact(self, batch: Sequence[Record]) -> Iterator[Match]:
        P, T = self.prompts.full, self.targets.full
        XT, XP = self.cross_targets.full, self.cross_prompts.full
        for pos, r in enumerate(batch):
            p, t = r.prompt, r.target
            if p in P or p in XT:
                yield from _matches(pos, P.get(p), XT.get(p), "prompt")
            if t is not None and (t in T or t in XP):
                yield from _matches(pos, T.get(t), XP.get(t), "target")

    def _probe_normalized(self, batch: Sequence[Record]) -> Iterator[Match]:
        P, T, XT, XP = self.prompts, self.targets, self.cross_targets, self.cross_prompts
        keys_p, keys_t = self._keys_p, self._keys_t
        for pos, r in enumerate(batch):
            if prefix_key(r.prompt) in keys_p:
                n = normalize(r.prompt)
                yield from _matches(pos, P.full.get(n), XT.full.get(n), "prompt")
            t = r.target
            if t is not None and prefix_key(t) in keys_t:
                n = normalize(t)
                yield from _matches(pos, T.full.get(n), XP.full.get(n), "target")

    def parameters(self) -> dict[str, Any]:
        if self.level == "exact":
            return {"method": "byte-identical canonical text"}
        return {"method": "identical after NFKC, typographic quotes/dashes to ASCII, case folding outside LaTeX math, "
                           "whitespace collapsing, removal of invisible (default-ignorable) characters"}


def _matches(pos: int, same: list[int] | None, cross: list[int] | None, train_field: str) -> Iterator[Match]:
    """Matches of one train field: same-field hits, then crossed-field hits."""
    other = "target" if train_field == "prompt" else "prompt"
    for e in same or ():
        yield Match(pos, e, train_field, train_field, 1.0)
    for e in cross or ():
        yield Match(pos, e, other, train_field, 1.0)
