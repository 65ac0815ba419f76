"""healthbench_rubrics: HealthBench-shaped rubric data (JSONL) where the reward target is a rubric bank.

Demonstrates that a rubric can leak without its prompt. 40 eval and 160 train records, each
a conversation and a rubric (level:example criteria built from its medical topic's facts,
plus two or three level:cluster criteria from a shared pool, which are not leaks). Planted
in train, at scattered rows:

* 6 ``rubric_reordered_prompt_reworded``: the eval criteria in another order behind the
  same question in the other, disjoint wording (a target leak);
* 3 ``full_duplicate``: the whole record, prompt_id included (a pair leak);
* 2 ``prompt_identical_rubric_different``: the same turns with criteria from other facts
  (a prompt leak);
* 2 decoys, ``rubric_same_criteria_other_points``: a reworded prompt and the eval criteria
  reordered, every one with other points; other labels, so not a leak.

Every other eval record is about a topic no train record has, with no shared 13-gram and a
word-3-gram Jaccard < 0.3 against every train prompt, and criteria of word Jaccard < 0.7
against every train criterion. Wording: vocab/healthbench.toml; topics:
vocab/healthbench_topics.toml. The verl-rubric variant is healthbench_rubrics_verl.py.
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import interleave, jaccard, ngrams, scatter, seeded, toks, vocab, write_json, write_jsonl
from .healthbench_questions import Question, Questions, Turns, pick, user_text

Record = dict[str, Any]

NAME = "healthbench_rubrics"
N_EVAL, N_TRAIN = 40, 160
REWORDED, DUPLICATE, SAME_PROMPT = "rubric_reordered_prompt_reworded", "full_duplicate", "prompt_identical_rubric_different"
DECOY = "rubric_same_criteria_other_points"
#: (kind, eval records) in the order the planted eval rows are drawn
PLAN = ((REWORDED, 6), (DUPLICATE, 3), (SAME_PROMPT, 2), (DECOY, 2))
#: what of the eval record each kind repeats in train (the "matched" of expected_leaks.json)
MATCHED = {DUPLICATE: ["prompt", "rubric_bank", "rubric_order", "prompt_id"], REWORDED: ["rubric_bank"],
           DECOY: ["rubric_criteria"], SAME_PROMPT: ["prompt"]}


@dataclass(frozen=True)
class Built:
    """The records in file order and the planted pairs (rows 0-based)."""

    train: list[Record]
    eval: list[Record]
    leaks: list[dict[str, Any]]
    decoys: list[dict[str, Any]]
    notes: dict[str, str]


def make(out: Path) -> None:
    """Write ``out/healthbench_rubrics/``: train.jsonl, eval.jsonl, expected_leaks.json."""
    b = build()
    d = out / NAME
    write_jsonl(d / "train.jsonl", b.train)
    write_jsonl(d / "eval.jsonl", b.eval)
    write_json(d / "expected_leaks.json", summary(b, "0-based line numbers in eval.jsonl / train.jsonl", b.notes))


def summary(b: Built, row_numbers: str, notes: dict[str, str]) -> dict[str, Any]:
    """The content of expected_leaks.json."""
    return {"n_eval": N_EVAL, "n_train": N_TRAIN, "leaks": b.leaks, "decoys": b.decoys, "notes": notes, "row_numbers": row_numbers}


@functools.cache
def build() -> Built:
    """Draw the records and plant the copies (the same every call)."""
    v = vocab("healthbench")
    g = Generator(v, topics(v["criteria"]))
    order = list(range(len(g.topics)))
    g.rng.shuffle(order)
    eval_topics, train_topics = [g.topics[i] for i in order[:N_EVAL]], [g.topics[i] for i in order[N_EVAL:]]
    drawn = iter(g.rng.sample(range(N_EVAL), sum(n for _, n in PLAN)))
    kind_of = {next(drawn): kind for kind, n in PLAN for _ in range(n)}
    train = g.train_records(train_topics, N_TRAIN - len(kind_of))
    evals: dict[int, Record] = {}
    planted = [g.plant(i, eval_topics[i], kind_of[i], evals) for i in sorted(kind_of)]
    pool = g.criterion_words(train + [c for _, _, c in planted])
    for i in range(N_EVAL):
        if i not in evals:
            evals[i] = g.clean_eval(eval_topics[i], pool)
    placed = scatter(g.rng, planted, N_TRAIN)
    pairs = _pairs(placed, evals)
    return Built(train=interleave({row: c for row, (_, _, c) in placed.items()}, train, N_TRAIN),
                 eval=[evals[i] for i in range(N_EVAL)], leaks=[x for x in pairs if x["kind"] != DECOY],
                 decoys=[x for x in pairs if x["kind"] == DECOY], notes=v["notes"])


def _pairs(placed: dict[int, tuple[int, str, Record]], evals: dict[int, Record]) -> list[dict[str, Any]]:
    """The planted (eval, train) pairs by eval row, as expected_leaks.json lists them."""
    pairs = [{"eval_prompt_id": evals[i]["prompt_id"], "train_prompt_id": c["prompt_id"], "eval_row": i,
              "train_row": row, "kind": kind, "matched": MATCHED[kind]} for row, (i, kind, c) in placed.items()]
    return sorted(pairs, key=lambda x: int(x["eval_row"]))


def topics(kinds: Sequence[str]) -> list[dict[str, Any]]:
    """The topics, checked: no fact text (of the ``kinds`` lists) may be shared; that keeps eval-only topics clean."""
    ts = vocab("healthbench_topics")["topics"]
    facts = [f for t in ts for kind in kinds for f in t[kind]]
    shared = sorted({f for f in facts if facts.count(f) > 1})
    if shared:
        raise ValueError(f"vocab/healthbench_topics.toml: fact text in two topics: {shared[0]!r}")
    return ts


class Generator:
    """The seeded draws; remembers the train prompts' n-grams so eval prompts can avoid them."""

    def __init__(self, v: dict[str, Any], ts: list[dict[str, Any]]):
        self.v, self.topics = v, ts
        self.rng, self.ids = seeded(2), seeded(3)
        self.questions = Questions(v, self.rng)
        self.train_g13: set[tuple[str, ...]] = set()
        self.train_tri: list[set[tuple[str, ...]]] = []
        self.forced_multi = False

    # -- records --------------------------------------------------------------
    def record(self, t: dict[str, Any], prompt: Turns, criteria: list[Record]) -> Record:
        """A record with a fresh prompt_id and its criteria among two or three cluster criteria."""
        return {"prompt_id": self.new_id(), "prompt": prompt, "rubrics": self.with_clusters(criteria),
                "example_tags": ["theme:" + t["theme"]]}

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.ids.getrandbits(128), version=4))

    def train_records(self, ts: list[dict[str, Any]], n: int) -> list[Record]:
        """``n`` train records, each topic twice in turn and then drawn; no prompt or bank twice."""
        out: list[Record] = []
        prompts: set[str] = set()
        banks: set[frozenset[str]] = set()
        k = 0
        while len(out) < n:
            t = ts[k % len(ts)] if k < 2 * len(ts) else self.rng.choice(ts)
            k += 1
            q, prompt = self.questions.question(t)
            ut = user_text(prompt)
            if ut in prompts:
                continue
            crits, _ = self.rubric(q)
            bank = frozenset(c["criterion"] for c in crits)
            if bank in banks:
                continue
            prompts.add(ut)
            banks.add(bank)
            self.train_tri.append(ngrams(toks(ut), 3))
            self.train_g13 |= ngrams(toks(ut), 13)
            out.append(self.record(t, prompt, crits))
        return out

    def plant(self, i: int, t: dict[str, Any], kind: str, evals: dict[int, Record]) -> tuple[int, str, Record]:
        """Eval record ``i`` (stored in ``evals``) and its train copy of the planted ``kind``."""
        # at least one reworded leak is a multi-turn conversation
        force = kind == REWORDED and t["kind"] == "symptom" and not self.forced_multi
        self.forced_multi |= force
        q, prompt = self.eval_question(t, kind in (REWORDED, DECOY), force)
        crits, other = self.planted_rubrics(q, kind)
        rec = evals[i] = self.record(t, prompt, crits)
        if kind == DUPLICATE:
            return i, kind, copy.deepcopy(rec)
        if kind == SAME_PROMPT:
            return i, kind, self.record(t, copy.deepcopy(prompt), other)
        reworded = self.questions.prompt(q, 1)
        if kind == REWORDED:
            shuffled = list(crits)
            while [c["criterion"] for c in shuffled] == [c["criterion"] for c in crits]:
                self.rng.shuffle(shuffled)
            return i, kind, self.record(t, reworded, copy.deepcopy(shuffled))
        repointed = [dict(c, points=self.other_points(c["points"])) for c in crits]
        self.rng.shuffle(repointed)
        return i, kind, self.record(t, reworded, repointed)

    def planted_rubrics(self, q: Question, kind: str) -> tuple[list[Record], list[Record]]:
        """The eval criteria and, for a same-prompt leak, train criteria from the other facts, not alike."""
        if kind != SAME_PROMPT:
            return self.rubric(q)[0], []
        for _ in range(500):
            crits, ids = self.rubric(q, n=5)
            other, _ = self.rubric(q, fact_ids=[j for j in range(len(self.facts(q.topic))) if j not in ids])
            if not too_close(other, [set(toks(c["criterion"])) for c in crits]):
                return crits, other
        raise RuntimeError("no distinct rubric pair for " + q.topic["name"])

    def clean_eval(self, t: dict[str, Any], pool: list[set[str]]) -> Record:
        """An eval record whose criteria are unlike every train criterion."""
        q, prompt = self.eval_question(t)
        for _ in range(2000):
            crits, _ = self.rubric(q)
            if not too_close(crits, pool):
                return self.record(t, prompt, crits)
        raise RuntimeError("no distinct rubric for " + t["name"])

    @staticmethod
    def criterion_words(recs: list[Record]) -> list[set[str]]:
        return [set(toks(c["criterion"])) for r in recs for c in r["rubrics"] if "level:example" in c["tags"]]

    # -- questions ----------------------------------------------------------
    def eval_question(self, t: dict[str, Any], wording_a: bool = False, multi: bool = False) -> tuple[Question, Turns]:
        """A question whose user text shares no 13-gram and < 0.3 3-gram Jaccard with every train prompt."""
        for _ in range(500):
            q, prompt = self.questions.question(t, wording_a, multi)
            tk = toks(user_text(prompt))
            if not ngrams(tk, 13) & self.train_g13 and not any(jaccard(ngrams(tk, 3), o) >= 0.3 for o in self.train_tri):
                return q, prompt
        raise RuntimeError("no clean eval prompt for " + t["name"])

    # -- rubrics --------------------------------------------------------------
    def facts(self, t: dict[str, Any]) -> list[tuple[str, str]]:
        """(criterion kind, fact) for every fact of the topic, in vocabulary order."""
        return [(kind, fact) for kind in self.v["criteria"] for fact in t[kind]]

    def rubric(self, q: Question, n: int | None = None, fact_ids: list[int] | None = None) -> tuple[list[Record], list[int]]:
        """Criteria from ``fact_ids`` (else ``n``, else 5-10 drawn facts), shuffled; and the fact ids."""
        facts = self.facts(q.topic)
        if fact_ids is None:
            fact_ids = sorted(self.rng.sample(range(len(facts)), n or self.rng.randint(5, 10)))
        crits = [self.criterion(*facts[i], q.persona) for i in fact_ids]
        self.rng.shuffle(crits)
        return crits, fact_ids

    def criterion(self, kind: str, fact: str, p: dict[str, Any]) -> Record:
        spec = self.v["criteria"][kind]
        text = pick(self.rng, spec["templates"]).format(fact=fact, obj=p["obj"])
        points = pick(self.rng, spec["points"])
        return {"criterion": text, "points": points, "tags": ["level:example", "axis:" + pick(self.rng, spec["axes"])]}

    def with_clusters(self, crits: list[Record]) -> list[Record]:
        """The criteria with two or three cluster criteria inserted at drawn places."""
        rub = list(crits)
        for c in self.rng.sample(self.v["clusters"], self.rng.randint(2, 3)):
            item = {"criterion": c["criterion"], "points": c["points"],
                    "tags": ["level:cluster", "cluster:" + c["cluster"], "axis:" + c["axis"]]}
            rub.insert(self.rng.randint(0, len(rub)), item)
        return rub

    def other_points(self, pts: int) -> int:
        """Points of the same sign and a different size."""
        return (1 if pts > 0 else -1) * self.rng.choice([v for v in range(2, 11) if v != abs(pts)])


def too_close(crits: list[Record], pool: list[set[str]], limit: float = 0.7) -> bool:
    """Whether any criterion's words have a Jaccard of ``limit`` or more with a word set of ``pool``."""
    return any(jaccard(set(toks(c["criterion"])), w) >= limit for c in crits for w in pool)
