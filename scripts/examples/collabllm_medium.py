"""collabllm_medium: a verl-format reconstruction of the CollabLLM "medium" document-writing split.

Demonstrates a per-turn split leak: 35 of the 100 eval rows sit in train (at scattered rows,
keeping their task_id) with a byte-identical system prompt, user prompt and reward target
(``reward_model.ground_truth``, the reference document). Every other eval row shares no
prompt, no document and no 8-word passage with train, and no two prompts are near-duplicates.
In eval.parquet ``reward_model`` and ``extra_info`` are JSON strings, in train.parquet
structs, as in some public uploads. Words and templates: vocab/collabllm_medium.toml.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from . import MESSAGE, VOCAB, cap, interleave, jaccard, ngrams, seeded, toks, vocab, write_json, write_parquet, write_text

NAME = "collabllm_medium"
N_EVAL, N_TRAIN, N_LEAK = 100, 400, 35

TRAIN_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(MESSAGE)),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64()), ("task_id", pa.string())])),
])
EVAL_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(MESSAGE)),
    ("ability", pa.string()),
    ("reward_model", pa.string()),
    ("extra_info", pa.string()),
])


def fix_articles(s: str) -> str:
    """"a" before a vowel becomes "an" (not before uni-, use, eu-, one).

    >>> fix_articles("a owl, a unit, A egg")
    'an owl, a unit, An egg'
    """
    return re.sub(r"\b([Aa]) (?=[aeiouAEIOU])(?!uni|use|eu|one)", r"\1n ", s)


def s_form(word: str) -> str:
    """A noun's plural, or a verb's third person singular.

    >>> [s_form(w) for w in ("city", "box", "day", "map")]
    ['cities', 'boxes', 'days', 'maps']
    """
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"


def past(verb: str) -> str:
    """A regular verb's past tense.

    >>> [past(v) for v in ("bake", "study", "play")]
    ['baked', 'studied', 'played']
    """
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    return verb + "ed"


class Generator:
    """Draws requests and reference documents that share no passage with any drawn before."""

    def __init__(self, rng: random.Random, v: dict[str, Any]):
        self.rng, self.words, self.docs, self.prompts = rng, v["words"], v["documents"], v["prompts"]
        self.doc_grams: set[tuple[str, ...]] = set()     # 8-grams of accepted documents
        self.prompt_grams: set[tuple[str, ...]] = set()  # 10-grams of accepted prompts
        self.prompt_tri: list[set[tuple[str, ...]]] = []  # 3-gram sets of accepted prompts
        self.used_topics: set[tuple[str, str]] = set()
        w, r = self.words, rng
        self.slots: dict[str, Callable[[], str]] = {
            "N": lambda: r.choice(w["nouns"]), "Ns": lambda: s_form(r.choice(w["nouns"])),
            "A": lambda: r.choice(w["adjectives"]), "V": lambda: r.choice(w["verbs"]),
            "V3": lambda: s_form(r.choice(w["verbs"])), "Ved": lambda: past(r.choice(w["verbs"])),
            "ADV": lambda: r.choice(w["adverbs"]), "NAME": lambda: r.choice(w["first_names"]) + " " + r.choice(w["last_names"]),
            "CITY": lambda: r.choice(w["cities"]), "ROLE": lambda: r.choice(w["roles"]),
            "NUM": lambda: str(r.randint(3, 96)), "PCT": lambda: "%d percent" % r.randint(11, 89),
            "TUNIT": lambda: r.choice(w["time_units"]), "SEASON": lambda: r.choice(w["seasons"]),
        }

    # -- documents ----------------------------------------------------------
    def fill(self, template: str, topic: str, aud: str) -> str:
        """One sentence: every ``{slot}`` drawn, ``{TOPIC}`` and ``{AUD}`` given."""
        given = {"TOPIC": topic, "AUD": aud}
        s = re.sub(r"\{(\w+)\}", lambda m: given[m[1]] if m[1] in given else self.slots[m[1]](), template)
        return cap(fix_articles(s))

    def sentence(self, pool: str, topic: str, aud: str, local: set[tuple[str, ...]]) -> str:
        """A sentence from the ``pool`` templates with no 8-gram seen in this or an earlier document."""
        for _ in range(200):
            s = self.fill(self.rng.choice(self.docs[pool]), topic, aud)
            g = ngrams(toks(s), 8)
            if not any(x in self.doc_grams or x in local for x in g):
                local.update(g)
                return s
        raise RuntimeError("could not find a fresh sentence")

    def document(self, topic: str, aud: str) -> str:
        """A reference document of 150-400 words in paragraphs of 3-5 sentences."""
        r = self.rng
        while True:
            target = r.randint(170, 360)
            local: set[tuple[str, ...]] = set()
            sents = [self.sentence("intro", topic, aud, local)]
            while sum(len(s.split()) for s in sents) < target:
                sents.append(self.sentence("body", topic, aud, local))
            sents.append(self.sentence("close", topic, aud, local))
            paras, i = [], 0
            while i < len(sents):
                k = r.randint(3, 5)
                paras.append(" ".join(sents[i:i + k]))
                i += k
            doc = "\n\n".join(paras)
            grams = ngrams(toks(doc), 8)
            if 150 <= len(doc.split()) <= 400 and not grams & self.doc_grams:
                self.doc_grams |= grams
                return doc

    # -- prompts ------------------------------------------------------------
    def prompt(self) -> tuple[str, str, str]:
        """(request, topic, audience): a 40-120 word request unlike every one drawn before."""
        for _ in range(5000):
            subj, angle = self.rng.choice(self.prompts["subjects"]), self.rng.choice(self.prompts["angles"])
            if (subj, angle) in self.used_topics:
                continue
            topic = angle.format(s=subj)
            text, aud = self._request(topic)
            if self._fresh(text):
                self.used_topics.add((subj, angle))
                return text, topic, aud
        raise RuntimeError("could not find a fresh prompt")

    def _request(self, topic: str) -> tuple[str, str]:
        r, p = self.rng, self.prompts
        aud, dtype = r.choice(p["audiences"]), r.choice(p["doc_types"])
        parts = [fix_articles(r.choice(p["openers"]).format(dtype=dtype, topic=topic, aud=aud))]
        extra = [self._context(aud)] if r.random() < 0.7 else []
        n = r.choice(range(180, 401, 20))
        length = r.choice(p["length_phrases"]).format(n=n, m=n + 100)
        extra.append(r.choice(p["length_sentences"]).format(len=length))
        reqs = r.sample(p["requirements"], 4)
        kw = {f"r{i}": q for i, q in enumerate(reqs)} | {f"R{i}": cap(q) for i, q in enumerate(reqs)}
        extra.append(r.choice(p["requirement_frames"]).format(**kw))
        r.shuffle(extra)
        closer = r.choice(p["closers"]).format(weekday=r.choice(p["weekdays"]))
        return " ".join(parts + extra + ([closer] if closer else [])), aud

    def _context(self, aud: str) -> str:
        r, p = self.rng, self.prompts
        org = "the %s %s %s" % (r.choice(p["org_words"]), r.choice(p["org_words"]), r.choice(p["org_types"]))
        aud2 = aud
        while aud2 == aud:
            aud2 = r.choice(p["audiences"])
        template = r.choice(p["contexts"])
        return template.format(venue=r.choice(p["venues"]), org=org, city=r.choice(self.words["cities"]), aud2=aud2,
                               k=r.choice(p["subscriber_counts"]), event=r.choice(p["events"]),
                               month=r.choice(p["months"]), weekday=r.choice(p["weekdays"]))

    def _fresh(self, text: str) -> bool:
        """Accept (and remember) a request of 40-120 words sharing no 10-gram and < 0.2 3-gram Jaccard with earlier ones."""
        if not 40 <= len(text.split()) <= 120:
            return False
        t = toks(text)
        g10, tri = ngrams(t, 10), ngrams(t, 3)
        if g10 & self.prompt_grams or any(jaccard(tri, o) >= 0.2 for o in self.prompt_tri):
            return False
        self.prompt_tri.append(tri)
        self.prompt_grams |= g10
        return True


def make(out: Path) -> None:
    """Write ``out/collabllm_medium/``: train/eval parquet, expected_leaks.json, README.md."""
    v, rng = vocab(NAME), seeded(1)
    gen = Generator(rng, v)
    n_tasks = N_EVAL + N_TRAIN - N_LEAK
    task_ids = ["medium-%05d" % k for k in rng.sample(range(2000), n_tasks)]
    tasks = []
    for task_id in task_ids:
        user, topic, aud = gen.prompt()
        tasks.append({"task_id": task_id, "user": user, "doc": gen.document(topic, aud)})
    leaked = sorted(rng.sample(range(N_EVAL), N_LEAK))
    leak_row = dict(zip(leaked, rng.sample(range(N_TRAIN), N_LEAK)))
    train = interleave({row: tasks[e] for e, row in leak_row.items()}, tasks[N_EVAL:], N_TRAIN)
    d = out / NAME
    write_parquet(d / "train.parquet", _columns(train, "train", v["system_prompt"]), TRAIN_SCHEMA)
    write_parquet(d / "eval.parquet", _columns(tasks[:N_EVAL], "test", v["system_prompt"]), EVAL_SCHEMA)
    write_json(d / "expected_leaks.json", {
        "eval_index_leaked": leaked,
        "train_rows": {str(k): leak_row[k] for k in leaked},
        "match": "byte-identical system prompt, user prompt and reward_model.ground_truth",
        "n_eval": N_EVAL, "n_train": N_TRAIN,
    })
    readme = (VOCAB / f"{NAME}_README.md").read_text(encoding="utf-8")
    write_text(d / "README.md", readme.format(n_leak=N_LEAK, n_eval=N_EVAL, n_train=N_TRAIN))


def _columns(rows: list[dict[str, str]], split: str, system: str) -> dict[str, list[Any]]:
    """verl columns; the test split stores reward_model and extra_info as JSON strings."""
    as_json = split == "test"

    def cell(value: dict[str, Any]) -> Any:
        return json.dumps(value, ensure_ascii=False) if as_json else value

    return {
        "data_source": ["collabllm/medium"] * len(rows),
        "prompt": [[{"role": "system", "content": system}, {"role": "user", "content": t["user"]}] for t in rows],
        "ability": ["writing"] * len(rows),
        "reward_model": [cell({"style": "rule", "ground_truth": t["doc"]}) for t in rows],
        "extra_info": [cell({"split": split, "index": i, "task_id": t["task_id"]}) for i, t in enumerate(rows)],
    }
