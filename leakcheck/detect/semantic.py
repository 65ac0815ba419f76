"""The ``semantic`` level: rephrased eval prompts, found offline, anchored on the reward target.

A rephrase keeps few word n-grams of its source, so ``near`` and ``contained`` miss it. It
keeps many *character* n-grams (names, numbers, stems of content words, and in code the
operators and punctuation between them), and it keeps its final answer. Each train prompt is
compared with every eval prompt as the cosine of their character 2-5-gram TF-IDF vectors
(hashed features, n-grams across word boundaries, IDF from the eval prompts and the train
sample), and each train record is matched to its best eval record:

* both records state a final answer (GSM8K's ``#### 18``, ``\\boxed{}``, a numeric short
  target) and the answers are equal: only eval records with that answer are compared
  (cheap: an answer narrows 1,319 GSM8K items to a handful), scored as the cosine plus
  ``NUMBER_WEIGHT`` times the Jaccard of the numbers in the two prompts (a rephrase keeps
  its numbers; a different problem with the same small answer does not), against
  ``anchored_threshold``;
* the answers differ: never a match (a template sibling with another answer);
* no answer on one side (code, prose, no target): ``threshold``, or ``code_threshold`` when
  the eval record is code. Against code the score is the mean of the whole-text cosine and
  the cosine of the two texts' prose (docstrings, comments, strings, prose lines:
  :func:`~.codeprose.prose_of`), plus ``LITERAL_WEIGHT`` times the Jaccard of their literals
  (a rephrased program renames its identifiers and restructures its body, but keeps its
  description and many of its examples' values; a program for a similar task shares
  boilerplate and neither), plus ``SHAPE_WEIGHT`` times the overlap of the shapes of their
  example values and ``SEQUENCE_WEIGHT`` when the train text writes the same sequence of
  examples (calls, kinds, booleans, in order) as that eval record and no other (:mod:`.shapes`:
  a rephrase that changes the values keeps the lengths, kinds and order its tests need).

An optional embedding model (``leakcheck[semantic]``) re-ranks the unanchored candidates:
the score is then the mean of the lexical score and the cosine of sentence embeddings of the
eval prompt (its question; for code the prose of the record) and the train text (its prose
when a candidate is code), against its own defaults (:data:`BLENDED`). Anchored matches need
no embedding (the answer and the numbers are stronger evidence, and it keeps 1M records
cheap), and code other than Python, on either side, is scored lexically (MiniLM ranked C
translations worse than the character n-grams did).

>>> from leakcheck.records import Record
>>> from leakcheck.config import ScanConfig, SemanticConfig
>>> cfg = ScanConfig(levels=("semantic",), semantic=SemanticConfig(embedder="none"))
>>> q = "Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with four. She sells the rest for $2 each. How much does she make?"
>>> idx = SemanticIndex([Record("e0", 0, q, "... \\n#### 18"), Record("e1", 1, "What is the capital of France?", "Paris")], cfg)
>>> r = "Each day Janet's ducks produce 16 eggs; she eats 3 at breakfast and uses 4 for muffins, selling the rest at $2 apiece. Her daily earnings?"
>>> [(m.eval_idx, m.detail["target_agreement"]) for m in idx.probe([Record("t0", 0, r, "#### 18"), Record("t1", 1, r, "#### 20")])]
[(0, 'agree')]
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Self

import numpy as np
import xxhash

from ..config import ScanConfig
from ..records import Record
from .agree import _code_of
from .base import Match
from .codeprose import prose_of
from .shapes import example_sequence, example_shapes, shape_overlap

N_BITS = 20
N_FEATURES = 1 << N_BITS
#: Default (prose, code) thresholds of the lexical score, chosen with ``bench_semantic.py --tune`` (tune half, mixed protocol).
LEXICAL = (0.36, 0.28)
#: The same for the mean of lexical score and embedding cosine, chosen with ``--tune --embedder``
#: (tune half of MMLU abstract algebra and HumanEval Python/C, mixed protocol).
BLENDED = (0.46, 0.51)
#: Weight of the prompts' number overlap in an anchored score (chosen on GSM8K's tune half).
NUMBER_WEIGHT = 0.3
#: An anchored candidate needs at least this whole-text cosine: the same final answer and a
#: shared number do not make two otherwise different problems one (GSM8K mixed protocol, tune
#: half: floors 0, 0.15 and 0.2 tie at F1 0.989, 0.25 drops to 0.981; the largest tie is kept).
ANCHORED_LEXICAL_FLOOR = 0.2
#: Without an answer to anchor on, a prose eval record and a train text that both write numbers
#: must share at least this Jaccard of them: a rephrase keeps its quantities, a template sibling
#: with other numbers is another problem (GSM8K without targets, tune half: 0.2-0.4 tried, best 0.3).
NUMBER_AGREEMENT = 0.3
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
#: Weight of the prose cosine (docstrings, comments) against the whole-text cosine when code is compared with code
#: (0.3-0.5 tie on the tune half; higher is worse).
PROSE_WEIGHT = 0.5
#: Weight of the literals' overlap (numbers, short strings) when code is compared with code (chosen on the tune half).
LITERAL_WEIGHT = 0.15
#: Weight of the overlap of the examples' shapes (:mod:`.shapes`) when code is compared with code, added
#: after the mean with an embedding (HumanEval Python and C, 0.05-0.3 tried: 0.1 is best with and without one).
SHAPE_WEIGHT = 0.1
#: Added when a train text writes the same sequence of examples (:func:`.shapes.example_sequence`) as one
#: eval record and no other, after the mean with an embedding (HumanEval Python: 0.05-0.15 tie on the tune
#: half; 0.2 adds a false positive).
SEQUENCE_WEIGHT = 0.1
_LITERAL = re.compile(r"-?\d+(?:\.\d+)?|'[^'\n]{0,40}'|\"[^\"\n]{0,40}\"")
#: Candidates per train record whose literals are compared (the best by cosine).
_LITERAL_K = 10
NGRAMS = (2, 5)
#: What the level counts while probing (summed over shards into the report's parameters).
STAT_KEYS = ("semantic_texts", "semantic_texts_compared", "semantic_anchored_pairs")
INSTALL_HINT = "pip install 'leakcheck[semantic]'"
#: Dense similarity blocks stay under this many cells (rows x eval prompts).
_BLOCK_CELLS = 1 << 22
#: Lexical cosine under which no embedding is computed (an embedding re-ranks, it does not search).
_RERANK_FLOOR = 0.15
#: Candidates per train record an embedding re-ranks.
_RERANK_K = 5


_WHITESPACE = re.compile(r"\s\s+")
#: Multiplier of the n-gram's polynomial hash of code points, and the multiplier whose top bits pick its feature.
_P, _MIX = np.uint64(0x100000001B3), np.uint64(0x9E3779B97F4A7C15)
#: Characters hashed at once (bounds the memory of the numpy arrays).
_CHUNK_CHARS = 1 << 20


def term_counts(texts: Sequence[str]) -> Any:
    """Sublinear term frequencies (``1 + log tf``) of hashed character 2-5-grams, one CSR row per text.

    The n-grams are scikit-learn's ``analyzer="char"`` ones (lower-cased, runs of whitespace as
    one space, across word boundaries), hashed in numpy for a whole batch at once: 3x faster
    than the analyzer's Python loop, which was three quarters of the level's time.

    >>> m = term_counts(["abc", "ABC", ""])
    >>> m.shape == (3, N_FEATURES), m[0].nnz, (m[0] != m[1]).nnz, m[2].nnz
    (True, 3, 0, 0)
    """
    from scipy.sparse import vstack

    docs = [_WHITESPACE.sub(" ", t.lower()) for t in texts]
    parts, start, size = [], 0, 0
    for i, d in enumerate(docs):
        size += len(d)
        if size >= _CHUNK_CHARS:
            parts.append(_ngram_counts(docs[start : i + 1]))
            start, size = i + 1, 0
    if start < len(docs) or not parts:
        parts.append(_ngram_counts(docs[start:]))
    m = vstack(parts).tocsr() if len(parts) > 1 else parts[0]
    m.data = (1.0 + np.log(m.data)).astype(np.float32)
    return m


def _ngram_counts(docs: list[str]) -> Any:
    """Counts of hashed character 2-5-grams: every n-gram start position of the joined docs, those inside one doc kept."""
    from scipy.sparse import csr_matrix

    lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    cps = np.frombuffer("".join(docs).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    row = np.repeat(np.arange(len(docs), dtype=np.int64), lens)
    end = np.repeat(np.cumsum(lens), lens)  # where the doc holding each position ends
    pos = np.arange(len(cps), dtype=np.int64)
    rows, feats, h = [], [], cps
    for n in range(NGRAMS[0] - 1, NGRAMS[1]):  # h[i]: hash of the (n + 1)-gram starting at i
        h = h[:-1] * _P + cps[n:]
        if n + 1 < NGRAMS[0]:
            continue
        ok = pos[: len(h)] + n + 1 <= end[: len(h)]
        rows.append(row[: len(h)][ok])
        feats.append(((h[ok] * _MIX) >> np.uint64(64 - N_BITS)).astype(np.int64))
    r, f = np.concatenate(rows), np.concatenate(feats)
    m = csr_matrix((np.ones(len(r), dtype=np.float32), (r, f)), shape=(len(docs), N_FEATURES))
    m.sum_duplicates()
    m.sort_indices()
    return m


def number_keys(text: str) -> frozenset[int]:
    """Hashes of the numbers written in ``text`` (``1,000`` = ``1000``).

    >>> number_keys("16 eggs, 3 eaten, $2 each") == number_keys("2 dollars for each of 16 eggs minus 3")
    True
    """
    return frozenset(xxhash.xxh3_64_intdigest(n.replace(",", "").encode()) for n in _NUMBER.findall(text))


def _jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def literal_keys(text: str) -> frozenset[int]:
    """Hashes of the numbers and short string literals in code, quotes dropped (``'ab'`` = ``"ab"``).

    A rephrased or translated program renames its identifiers but keeps its examples' values.

    >>> literal_keys("f([1, 2.5], 'ab') == 3") == literal_keys('g(list_of(1, 2.5), "ab") returns 3')
    True
    """
    # a docstring's quotes are no empty string literal
    text = text.replace('"""', " ").replace("'''", " ")
    return frozenset(xxhash.xxh3_64_intdigest(m.strip("'\"").encode()) for m in _LITERAL.findall(text))


def anchor_key(target: Any) -> int:
    """Key of the final answer a target states (0: none); ``target`` is its text or :class:`~.agree.TargetView`.

    >>> anchor_key("... so 18.\\n#### 18") == anchor_key("#### 18") != 0, anchor_key("def f(): pass")
    (True, 0)
    """
    from .agree import TargetView, view

    if target is None:
        return 0
    v = target if isinstance(target, TargetView) else view(target)
    a = v.answer if v.answer is not None else v.short if v.short is not None and v.short.like else None
    return 0 if a is None else int(a.canon) or 1


_CODE_KINDS = {None: 0, "py": 1, "lex": 2}


class CodeViews(NamedTuple):
    """What a batch of train texts is compared with eval code on (one entry per text)."""

    prose: Any
    literals: list[frozenset[int]]
    shapes: list[tuple[int, ...]]
    sequences: list[int]


class Plain(NamedTuple):
    """A candidate of a train record without a final answer in common.

    ``similarity`` is the lexical score (for code: the mean of the whole-text and prose
    cosines plus the literals' term); ``score`` adds the terms of the examples' shapes and of
    their sequence (``sequence``: None when a side has no key), which an embedding does not
    average away.
    """

    eval: int
    similarity: float
    lexical: float
    prose: float | None = None
    literals: float | None = None
    shapes: float | None = None
    sequence: bool | None = None

    @property
    def score(self) -> float:
        return self.similarity + self.examples

    @property
    def examples(self) -> float:
        """The share of the score the examples' shapes and sequence add."""
        return SHAPE_WEIGHT * (self.shapes or 0.0) + SEQUENCE_WEIGHT * bool(self.sequence)


def _kind(code: tuple[str, int, int] | None) -> str | None:
    return None if code is None else code[0]


def _c_like(text: str) -> bool:
    """Code in a braces-and-semicolons language (not Python with a line of prose before it).

    >>> _c_like("int f(int a) {\\n  return a;\\n}"), _c_like("Write a function.\\ndef f(a):\\n    return a")
    (True, False)
    """
    return "{" in text and ";" in text and _kind(_code_of(text)) == "lex"


def embed_text(r: Record, kind: int) -> str:
    """What an eval record is embedded as: its prompt, or for code the prose of the whole record."""
    return (prose_of(record_text(r, 0)) or r.prompt) if kind else r.prompt


def _embeddable(text: str, against_code: bool) -> str:
    return (prose_of(text) or text) if against_code else text


def record_text(r: Record, anchor: int) -> str:
    """What is compared: the prompt, or prompt and target when the target states no final answer.

    A rephrased program or essay changes its solution as much as its question; the whole
    record carries more of what survives (names, literals, comments) than the question alone.
    A final answer is compared as a key instead (:func:`anchor_key`).
    """
    return r.prompt if anchor or r.target is None else f"{r.prompt}\n{r.target}"


class SemanticIndex:
    """Eval prompts as hashed character n-gram vectors, their final-answer keys and, optionally, embeddings."""

    level = "semantic"

    def __init__(self, evals: Sequence[Record], config: ScanConfig, _state: tuple[dict, dict] | None = None):
        c = config.semantic
        self.anchored_threshold = c.anchored_threshold
        self.knobs = c.threshold, c.code_threshold
        self.margin = c.near_miss_margin
        self.embedder_spec = c.embedder
        if _state is not None:
            self._load_state(*_state)
        else:
            self.E = len(evals)
            self.anchors = np.array([anchor_key(r.target) for r in evals], dtype=np.uint64)
            self.tf = term_counts([record_text(r, k) for r, k in zip(evals, self.anchors.tolist())])
            self.numbers = [number_keys(r.prompt) for r in evals]
            self.code_kind = np.array([_CODE_KINDS[_kind(_code_of(record_text(r, 0)))] for r in evals], dtype=np.uint8)
            self.literals = [literal_keys(record_text(r, 0)) if kind else frozenset() for r, kind in zip(evals, self.code_kind.tolist())]
            self.shapes = [example_shapes(record_text(r, 0)) if kind else () for r, kind in zip(evals, self.code_kind.tolist())]
            self.sequences = np.array([example_sequence(prose_of(record_text(r, 0))) if kind else 0
                                       for r, kind in zip(evals, self.code_kind.tolist())], dtype=np.uint64)
            self.tf_prose = term_counts([prose_of(record_text(r, 0)) if kind else "" for r, kind in zip(evals, self.code_kind.tolist())])
            self.df_eval = _doc_freq(self.tf)
            self.df_train = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            self.primed = 0
            self.embedder = _embedder(c.embedder)
            self.emb = self.embedder.encode([embed_text(r, int(kind)) for r, kind in zip(evals, self.code_kind.tolist())]) if self.embedder else None
        self._derive()
        prose, code = BLENDED if self.emb is not None else LEXICAL
        self.threshold = prose if c.threshold is None else c.threshold
        self.code_threshold = code if c.code_threshold is None else c.code_threshold
        #: code other than Python is scored lexically, embedder or not
        self.other_code_threshold = LEXICAL[1] if c.code_threshold is None else c.code_threshold

    # -- weights ----------------------------------------------------------------------------

    def _derive(self) -> None:
        """IDF from the eval prompts and the train sample; the eval side weighted and L2-normalised."""
        idx_e, cnt_e = self.df_eval
        idx_t, cnt_t = self.df_train
        df = np.zeros(N_FEATURES, dtype=np.int64)
        np.add.at(df, idx_e, cnt_e)
        np.add.at(df, idx_t, cnt_t)
        n = self.E + self.primed
        self.idf = (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)
        self.eval_vecs = _normalise(self.tf.multiply(self.idf[None, :]).tocsr())
        self.eval_t = self.eval_vecs.T.tocsr()
        self.prose_t = _normalise(self.tf_prose.multiply(self.idf[None, :]).tocsr()).T.tocsr()
        self.has_code = bool((self.code_kind > 0).any())
        # a sequence two eval records share tells neither apart
        keys, counts = np.unique(self.sequences, return_counts=True)
        self.unique_sequences = np.where(np.isin(self.sequences, keys[counts > 1]), np.uint64(0), self.sequences)
        by_key: dict[int, list[int]] = {}
        for i, k in enumerate(self.anchors.tolist()):
            if k:
                by_key.setdefault(k, []).append(i)
        self.by_anchor = {k: np.array(v, dtype=np.int64) for k, v in by_key.items()}
        self.unanchored = np.flatnonzero(self.anchors == 0)

    def vectors(self, texts: Sequence[str]) -> Any:
        """Unit TF-IDF vectors of ``texts`` in this index's weighting (one CSR row each)."""
        return _normalise(term_counts(texts).multiply(self.idf[None, :]).tocsr())

    def with_train_sample(self, sample: Sequence[Record]) -> Self:
        """A copy whose IDF also counts the prompts of ``sample`` (the first train records)."""
        return self.with_learned(learn(sample))

    def with_learned(self, learned: "Learned") -> Self:
        """A copy whose IDF also counts the train prompts of ``learned`` (see :func:`learn`)."""
        new = copy.copy(self)
        if learned.df is not None:
            new.df_train = learned.df
        new.primed = learned.records
        new._derive()
        return new

    # -- probing ----------------------------------------------------------------------------

    def probe(self, batch: Sequence[Record], stats: dict[str, int] | None = None) -> Iterator[Match]:
        """The best eval record of each train record, if it passes the threshold its anchoring allows."""
        stats = stats if stats is not None else {}
        for key in STAT_KEYS:
            stats.setdefault(key, 0)
        if not batch or self.E == 0:
            return
        stats["semantic_texts"] += len(batch)
        keys = np.array([anchor_key(r.target) for r in batch], dtype=np.uint64)
        # a final answer no eval record states rules out every eval record that states one
        live = [not k or k in self.by_anchor or len(self.unanchored) > 0 for k in keys.tolist()]
        stats["semantic_texts_compared"] += sum(live)
        texts = [record_text(r, k) if ok else "" for r, k, ok in zip(batch, keys.tolist(), live)]
        x = self.vectors(texts)
        code = self.code_views(texts) if self.has_code else None
        numbers = [number_keys(r.prompt) if k and ok else None for r, k, ok in zip(batch, keys.tolist(), live)]
        k = _RERANK_K if self.emb is not None else 1
        cand_a = self._anchored(x, keys, numbers, 1, stats)
        cand_p = self._plain(x, code, keys, k)
        emb = self._train_embeddings(texts, cand_p)
        for pos in range(len(batch)):
            m = self._decide(pos, cand_a[pos], cand_p[pos], emb, numbers[pos], batch[pos].prompt)
            if m is not None:
                yield m

    def _anchored(self, x: Any, keys: np.ndarray, numbers: Sequence[frozenset[int] | None], k: int,
                  stats: dict[str, int]) -> list[list[tuple[int, float, float]]]:
        """Per train row, its ``k`` best eval records among those stating the same final answer: (eval, lexical, numbers)."""
        rows, cols = [], []
        for pos, key in enumerate(keys.tolist()):
            cand = self.by_anchor.get(key) if key else None
            if cand is not None:
                rows.append(np.full(len(cand), pos, dtype=np.int64))
                cols.append(cand)
        out: list[list[tuple[float, int, float, float]]] = [[] for _ in range(x.shape[0])]
        if rows:
            r, c = np.concatenate(rows), np.concatenate(cols)
            stats["semantic_anchored_pairs"] += len(r)
            sims = np.asarray(x[r].multiply(self.eval_vecs[c]).sum(axis=1)).ravel()
            for pos, e, s in zip(r.tolist(), c.tolist(), sims.tolist()):
                nums = _jaccard(numbers[pos] or frozenset(), self.numbers[e])
                out[pos].append((s + NUMBER_WEIGHT * nums, e, s, nums))
        # best first, ties in eval order: the same whatever the batch
        return [[(e, s, n) for _, e, s, n in sorted(o, key=lambda t: (-t[0], t[1]))[:k]] for o in out]

    def code_views(self, texts: Sequence[str]) -> CodeViews:
        """What train texts are compared with eval code on: prose vectors, literal keys, example shapes and sequences."""
        prose = [prose_of(t) for t in texts]
        return CodeViews(self.vectors(prose), [literal_keys(t) for t in texts], [example_shapes(t) for t in texts],
                         [example_sequence(p) for p in prose])

    def _plain(self, x: Any, code_side: CodeViews | None, keys: np.ndarray, k: int) -> list[list[Plain]]:
        """Per train row, its ``k`` best eval records among those its final answer does not rule out.

        Against an eval record that is code the similarity is the mean of the whole-text cosine
        and the cosine of the two texts' prose (:func:`prose_of`: what a rephrase keeps in
        words), plus ``LITERAL_WEIGHT`` times the Jaccard of their literals (a rephrase keeps
        many of its examples' values; a program solving a similar task has others), and the
        score adds ``SHAPE_WEIGHT`` times the overlap of the examples' shapes (a rephrase that
        changes the values keeps their shapes) and ``SEQUENCE_WEIGHT`` when the train text writes
        the same sequence of examples as this eval record and no other; otherwise the whole-text
        cosine alone.
        """
        out: list[list[Plain]] = [[] for _ in range(x.shape[0])]
        xp = code_side.prose if code_side is not None else None
        # a train record stating an answer is compared only with eval records stating none
        for rows, cols in ((np.flatnonzero(keys == 0), None), (np.flatnonzero(keys != 0), self.unanchored)):
            if len(rows) == 0 or (cols is not None and len(cols) == 0):
                continue
            et = self.eval_t if cols is None else self.eval_t[:, cols]
            pt = None if code_side is None else self.prose_t if cols is None else self.prose_t[:, cols]
            ids = np.arange(self.E) if cols is None else cols
            code = self.code_kind[ids] > 0
            step = max(1, _BLOCK_CELLS // max(1, et.shape[1]))
            for i in range(0, len(rows), step):
                part = rows[i : i + step]
                lex = (x[part] @ et).toarray()
                prose = None if xp is None or pt is None else (xp[part] @ pt).toarray()
                sims = lex if prose is None else np.where(code[None, :], (1 - PROSE_WEIGHT) * lex + PROSE_WEIGHT * prose, lex)
                top = np.argsort(-sims, axis=1, kind="stable")[:, : max(k, _LITERAL_K) if prose is not None else k]
                for q, (pos, js) in enumerate(zip(part.tolist(), top.tolist())):
                    if prose is None or code_side is None:
                        out[pos] = [Plain(int(ids[j]), float(sims[q, j]), float(lex[q, j])) for j in js]
                    else:
                        out[pos] = self._with_literals(js, ids, code, sims[q], lex[q], prose[q], code_side, pos, k)
        return out

    def _with_literals(self, js: list[int], ids: np.ndarray, code: np.ndarray, sims: np.ndarray, lex: np.ndarray,
                       prose: np.ndarray, views: CodeViews, pos: int, k: int) -> list[Plain]:
        """The ``k`` best of candidates ``js`` once code candidates add their literals', shapes' and sequence's terms."""
        cand = []
        for j in js:
            e = int(ids[j])
            if not code[j]:
                cand.append(Plain(e, float(sims[j]), float(lex[j])))
                continue
            lit = _jaccard(views.literals[pos], self.literals[e])
            seq, theirs = views.sequences[pos], int(self.unique_sequences[e])
            cand.append(Plain(e, float(sims[j]) + LITERAL_WEIGHT * lit, float(lex[j]), float(prose[j]), lit,
                              shape_overlap(views.shapes[pos], self.shapes[e]), seq == theirs if seq and theirs else None))
        # best first, ties in eval order: the same whatever the batch
        return sorted(cand, key=lambda c: (-c.score, c.eval))[:k]

    def _train_embeddings(self, texts: Sequence[str], cand_p: list) -> dict[int, np.ndarray]:
        """Embeddings of the train texts whose lexical evidence is close enough for an embedding to matter.

        Against code, what is embedded is the text's prose (docstrings, comments): MiniLM reads
        words, and a rephrase keeps its words, not its identifiers.
        """
        if self.emb is None or self.embedder is None:
            return {}
        need = [p for p, b in enumerate(cand_p) if any(c.similarity >= _RERANK_FLOOR for c in b)]
        need = [p for p in need if not _c_like(texts[p])]  # C-like train code: characters only
        chosen = [_embeddable(texts[p], any(self.code_kind[c.eval] > 0 for c in cand_p[p])) for p in need]
        return dict(zip(need, self.embedder.encode(chosen))) if need else {}

    def _decide(self, pos: int, cand_a: list[tuple[int, float, float]], cand_p: list[Plain],
                emb: dict[int, np.ndarray], numbers: frozenset[int] | None, prompt: str) -> Match | None:
        """The match of train row ``pos``, if a candidate passes (or nearly passes) its threshold.

        A prose candidate whose numbers disagree with the train text's (both write some, their
        Jaccard is below :data:`NUMBER_AGREEMENT`) is another problem, not even a near miss.
        The train text's numbers (``numbers``, or read off ``prompt``) are read only for a
        candidate that could be reported: most rows are far below every threshold.
        """
        found = []  # (margin over threshold, -eval, score, detail)
        for e, lexical, nums in cand_a:
            if lexical < ANCHORED_LEXICAL_FLOOR:
                continue
            score = lexical + NUMBER_WEIGHT * nums
            found.append((score - self.anchored_threshold, -e, score,
                          {"lexical": round(lexical, 4), "numbers": round(nums, 4), "embedding": None, "target_agreement": "agree"}))
        for c in cand_p:
            e = c.eval
            kind = int(self.code_kind[e])
            # MiniLM reads prose and Python; on C-like code it ranks worse than the characters do
            cos = self._cos(pos, e, emb) if kind != 2 else None
            if cos is None and kind == 1 and self.emb is not None:
                kind = 2  # Python eval, C-like train text: scored on characters
            score = self._blend(c.similarity, cos) + c.examples
            threshold = (self.threshold, self.code_threshold, self.other_code_threshold)[kind]
            if score - threshold < -self.margin:
                continue  # never reported, whatever its numbers
            agree = None
            if kind == 0 and self.numbers[e]:
                numbers = number_keys(prompt) if numbers is None else numbers
                agree = _jaccard(numbers, self.numbers[e]) if numbers else None
            if agree is not None and agree < NUMBER_AGREEMENT:
                continue
            found.append((score - threshold, -e, score, {"lexical": round(c.lexical, 4), "prose": _round(c.prose), "literals": _round(c.literals),
                                                         "shapes": _round(c.shapes), "sequence": c.sequence, "numbers": _round(agree),
                                                         "embedding": cos, "target_agreement": "unknown"}))
        if not found:
            return None
        over, neg_e, score, detail = max(found, key=lambda f: (f[0], f[1]))
        if over < -self.margin:
            return None
        return Match(pos, -neg_e, "prompt", "prompt", score, below=over < 0, detail=detail)

    def _cos(self, pos: int, e: int, emb: dict[int, np.ndarray]) -> float | None:
        if pos not in emb or self.emb is None:
            return None
        return round(float(np.dot(emb[pos], self.emb[e])), 4)

    @staticmethod
    def _blend(lexical: float, cos: float | None) -> float:
        return lexical if cos is None else (lexical + cos) / 2

    # -- report -----------------------------------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        return {
            "method": "character 2-5-gram TF-IDF cosine of the records (against code: averaged with the cosine of their prose, "
                      "plus the overlap of their literals and of their examples' shapes and an equal sequence of examples), "
                      "anchored on equal final answers"
                      + (", averaged with an embedding cosine" if self.embedder else ""),
            "code_prose_weight": PROSE_WEIGHT,
            "code_literal_weight": LITERAL_WEIGHT,
            "code_shape_weight": SHAPE_WEIGHT,
            "code_sequence_weight": SEQUENCE_WEIGHT,
            "prose_number_agreement": NUMBER_AGREEMENT,
            "anchored_lexical_floor": ANCHORED_LEXICAL_FLOOR,
            "threshold": self.threshold,
            "code_threshold": self.code_threshold,
            "other_code_threshold": self.other_code_threshold,
            "eval_records_code": int((self.code_kind > 0).sum()),
            "eval_records_code_not_python": int((self.code_kind == 2).sum()),
            "anchored_threshold": self.anchored_threshold,
            "near_miss_margin": self.margin,
            "features": N_FEATURES,
            "ngram_chars": list(NGRAMS),
            "embedder": self.embedder.name if self.embedder else None,
            "eval_prompts_anchored": int((self.anchors != 0).sum()),
            "train_sample": self.primed,
        }

    def notes(self) -> list[str]:
        if self.embedder is not None:
            return []
        if self.embedder_spec == "none":
            return ["semantic: embedding re-rank off (--embedder none): lexical and final-answer evidence only"]
        if getattr(self, "saved_without_embeddings", False):
            return ["semantic: embedding re-rank off (the eval index holds no embeddings): lexical and final-answer evidence only; "
                    f"rebuild the index with leakcheck[semantic] installed ({INSTALL_HINT})"]
        return [f"semantic: embedding re-rank off (leakcheck[semantic] is not installed): lexical and final-answer evidence only; {INSTALL_HINT}"]

    # -- saving -----------------------------------------------------------------------------

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Hashed character n-gram weights per eval prompt, answer keys, document frequencies, embeddings: no text."""
        tf = self.tf
        arrays = {"tf_data": tf.data, "tf_indices": tf.indices.astype(np.int32), "tf_indptr": tf.indptr.astype(np.int64),
                  "anchors": self.anchors, "code_kind": self.code_kind, "df_eval_idx": self.df_eval[0], "df_eval_cnt": self.df_eval[1],
                  "df_train_idx": self.df_train[0], "df_train_cnt": self.df_train[1],
                  "num_size": np.array([len(n) for n in self.numbers], dtype=np.int64),
                  "num_h": np.array([h for n in self.numbers for h in sorted(n)], dtype=np.uint64),
                  "tf_prose_data": self.tf_prose.data, "tf_prose_indices": self.tf_prose.indices.astype(np.int32),
                  "tf_prose_indptr": self.tf_prose.indptr.astype(np.int64),
                  "lit_size": np.array([len(n) for n in self.literals], dtype=np.int64),
                  "lit_h": np.array([h for n in self.literals for h in sorted(n)], dtype=np.uint64),
                  "shape_size": np.array([len(n) for n in self.shapes], dtype=np.int64),
                  "shape_h": np.array([h for n in self.shapes for h in n], dtype=np.uint64), "sequences": self.sequences}
        if self.emb is not None:
            arrays["emb"] = self.emb
        meta = {"E": self.E, "primed": self.primed, "embedder": self.embedder.name if self.embedder else None}
        return meta, arrays

    def _load_state(self, meta: dict[str, Any], a: dict[str, np.ndarray]) -> None:
        from scipy.sparse import csr_matrix

        self.E, self.primed = int(meta["E"]), int(meta["primed"])
        self.tf = csr_matrix((a["tf_data"], a["tf_indices"], a["tf_indptr"]), shape=(self.E, N_FEATURES))
        # an index saved before code was also compared on its prose lacks these (a KeyError: rebuild it)
        self.tf_prose = csr_matrix((a["tf_prose_data"], a["tf_prose_indices"], a["tf_prose_indptr"]), shape=(self.E, N_FEATURES))
        self.anchors = a["anchors"].astype(np.uint64)
        self.code_kind = a["code_kind"].astype(np.uint8)
        self.df_eval = a["df_eval_idx"], a["df_eval_cnt"]
        self.df_train = a["df_train_idx"], a["df_train_cnt"]
        self.numbers = _sets(a["num_size"], a["num_h"])
        self.literals = _sets(a["lit_size"], a["lit_h"])
        self.shapes = _runs(a["shape_size"], a["shape_h"])
        self.sequences = a["sequences"].astype(np.uint64)
        self.emb = a.get("emb")
        self.saved_without_embeddings = self.emb is None
        self.embedder = _embedder(self.embedder_spec) if self.emb is not None else None
        if self.emb is not None and self.embedder is None:
            self.emb = None  # built with an embedder this process lacks: the note says so

    @classmethod
    def concat(cls, parts: Sequence[Self], sizes: Sequence[int]) -> Self:
        """One index over several eval sets, in order."""
        from scipy.sparse import vstack

        new = copy.copy(parts[0])
        new.E = sum(sizes)
        new.tf = vstack([p.tf for p in parts]).tocsr()
        new.tf_prose = vstack([p.tf_prose for p in parts]).tocsr()
        new.anchors = np.concatenate([p.anchors for p in parts])
        new.code_kind = np.concatenate([p.code_kind for p in parts])
        new.numbers = [n for p in parts for n in p.numbers]
        new.literals = [n for p in parts for n in p.literals]
        new.shapes = [n for p in parts for n in p.shapes]
        new.sequences = np.concatenate([p.sequences for p in parts])
        new.df_eval = _doc_freq(new.tf)
        embs = [p.emb for p in parts if p.emb is not None]
        new.emb = np.concatenate(embs) if len(embs) == len(parts) else None
        new._derive()
        return new


def _sets(sizes: np.ndarray, hashes: np.ndarray) -> list[frozenset[int]]:
    return [frozenset(r) for r in _runs(sizes, hashes)]


def _runs(sizes: np.ndarray, hashes: np.ndarray) -> list[tuple[int, ...]]:
    """``hashes`` cut in consecutive runs of ``sizes``."""
    ends = np.cumsum(sizes).tolist()
    h = hashes.tolist()
    return [tuple(h[s:e]) for s, e in zip([0] + ends[:-1], ends)]


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _doc_freq(m: Any) -> tuple[np.ndarray, np.ndarray]:
    """(feature, number of rows holding it), sorted by feature."""
    idx, cnt = np.unique(m.indices, return_counts=True)
    return idx.astype(np.int64), cnt.astype(np.int64)


def _normalise(m: Any) -> Any:
    from sklearn.preprocessing import normalize

    return normalize(m, norm="l2", copy=False).astype(np.float32)


@dataclass(frozen=True)
class Learned:
    """What the level learns from the first train records: their prompts' document frequencies
    (``None`` for no records), for the IDF. Needs no eval data, and pickles."""

    records: int
    df: tuple[np.ndarray, np.ndarray] | None


def learn(sample: Sequence[Record]) -> Learned:
    """The train side's share of the IDF: document frequencies of the prompts of ``sample``."""
    return Learned(len(sample), _doc_freq(term_counts([r.prompt for r in sample])) if sample else None)


def build(evals: Sequence[Record], config: ScanConfig) -> SemanticIndex:
    return SemanticIndex(evals, config)


def from_state(config: ScanConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> SemanticIndex:
    return SemanticIndex((), config, _state=(meta, arrays))


def _embedder(spec: str | None) -> Any:
    """The embedding model ``spec`` names, or ``None`` (lexical only)."""
    if spec == "none":
        return None
    from .embed import load_embedder

    return load_embedder(spec)
