"""The ``exact`` and ``normalized`` levels: equal canonical text, looked up in a dict.

Keys are the texts themselves, so a hit is string equality, never a hash collision.

>>> from leakcheck.records import Record
>>> d = TextMatchDetector("normalized", [Record("e0", 0, "What is  2+2?", "Four")], min_cross_chars=20)
>>> list(d.probe([Record("t0", 0, "what is 2+2?", "four")]))
[Match(pos=0, eval_idx=0, eval_field='prompt', train_field='prompt', score=1.0), Match(pos=0, eval_idx=0, eval_field='target', train_field='target', score=1.0)]
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from ..canon import normalize
from ..records import Record
from .base import Match


def _identity(text: str) -> str:
    return text


KEYS: dict[str, Callable[[str], str]] = {"exact": _identity, "normalized": normalize}


class TextMatchDetector:
    """Equality of canonical (``exact``) or normalized (``normalized``) text.

    Cross-field matches (an eval target equal to a train prompt) are looked up only for
    texts of at least ``min_cross_chars`` characters: a short answer such as "18" equal to
    a whole train prompt says nothing.
    """

    def __init__(self, level: str, evals: Sequence[Record], min_cross_chars: int):
        self.level = level
        self._key = KEYS[level]
        self._min_cross = min_cross_chars
        self.prompts: dict[str, list[int]] = {}
        self.targets: dict[str, list[int]] = {}
        self.cross_targets: dict[str, list[int]] = {}
        self.cross_prompts: dict[str, list[int]] = {}
        key = self._key
        for i, r in enumerate(evals):
            p = key(r.prompt)
            self.prompts.setdefault(p, []).append(i)
            if len(p) >= min_cross_chars:
                self.cross_prompts.setdefault(p, []).append(i)
            if r.target is not None:
                t = key(r.target)
                self.targets.setdefault(t, []).append(i)
                if len(t) >= min_cross_chars:
                    self.cross_targets.setdefault(t, []).append(i)

    def probe(self, batch: Sequence[Record]) -> Iterator[Match]:
        key = self._key
        prompts, targets = self.prompts, self.targets
        cross_t, cross_p = self.cross_targets, self.cross_prompts
        for pos, r in enumerate(batch):
            p = key(r.prompt)
            hit = prompts.get(p)
            if hit:
                for e in hit:
                    yield Match(pos, e, "prompt", "prompt", 1.0)
            hit = cross_t.get(p)
            if hit:
                for e in hit:
                    yield Match(pos, e, "target", "prompt", 1.0)
            if r.target is not None:
                t = key(r.target)
                hit = targets.get(t)
                if hit:
                    for e in hit:
                        yield Match(pos, e, "target", "target", 1.0)
                hit = cross_p.get(t)
                if hit:
                    for e in hit:
                        yield Match(pos, e, "prompt", "target", 1.0)

    def parameters(self) -> dict[str, Any]:
        if self.level == "exact":
            return {"method": "byte-identical canonical text"}
        return {"method": "identical after NFKC, case folding, whitespace collapsing, removal of BOM/zero-width characters"}
