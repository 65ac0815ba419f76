"""The cases issue 2 names, each with real files in real formats and exact expected findings."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import leakcheck
from leakcheck import Fields, ScanConfig
from leakcheck.gate import exit_code

from .conftest import SHARED_DATA, needs_shared, write_jsonl
from .helpers import by_kind, triples

EXACT_NORM = ScanConfig(levels=("exact", "normalized"))

Q1 = "Tom has 3 apples and buys 5 more. How many apples does he have now?"
A1 = "Tom starts with 3 apples. He buys 5 more, so he has 3 + 5 = 8 apples.\n#### 8"
Q2 = "A train travels 60 miles per hour for 3 hours. How far does it travel?"
A2 = "Distance is speed times time: 60 * 3 = 180 miles.\n#### 180"
Q3 = "Sara reads 12 pages a day. How many pages does she read in a week?"
A3 = "A week has 7 days, so she reads 12 * 7 = 84 pages.\n#### 84"


def chat(q: str, a: str, system: str = "You are a helpful math tutor.") -> dict:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": q}, {"role": "assistant", "content": a}]}


def test_chat_user_turn_equals_bare_question(jsonl):
    """A bare `question` in eval and the user turn of a chat in train are an exact match."""
    ev = jsonl("eval.jsonl", [{"id": "q1", "question": Q1, "answer": A1}, {"id": "q3", "question": Q3, "answer": A3}])
    tr = jsonl("train.jsonl", [chat(Q2, A2), chat(Q1, A1)])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == "gsm8k" and r.train.format == "openai-messages"
    assert triples(r) == {("q1", "1", "pair", "exact")}
    f = r.findings[0]
    assert (f.eval_field, f.train_field) == ("question", "messages")
    assert f.detail == {"prompt_level": "exact", "prompt_score": 1.0, "target_level": "exact", "target_score": 1.0, "target_in": "target"}
    # a pair finding stands for both fields: no separate prompt or target findings
    assert not by_kind(r, "prompt") and not by_kind(r, "target")


def test_normalized_matches_and_digits_are_kept(jsonl):
    ev = jsonl("eval.jsonl", [
        {"id": "a", "question": "The shirt costs 72 dollars. What is the price of 2 shirts?"},
        {"id": "b", "question": "The ﬁle holds １２ records and ３ headers. How many lines?"},
    ])
    tr = jsonl("train.jsonl", [
        {"text": "THE SHIRT costs  72\u200b dollars.\tWhat is the price of 2 shirts?"},
        {"text": "\ufeffthe file holds 12 records and 3 headers. how many lines?"},
        {"text": "The shirt costs 27 dollars. What is the price of 2 shirts?"},
    ])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert triples(r) == {("a", "0", "prompt", "normalized"), ("b", "1", "prompt", "normalized")}
    assert exit_code(r, EXACT_NORM.policy) == 1
    only_exact = leakcheck.scan(tr, ev, ScanConfig(levels=("exact",)))
    assert only_exact.findings == ()


def test_short_targets_are_chance_matches_not_leaks(jsonl):
    ev = jsonl("eval.jsonl", [{"id": "e1", "question": Q1, "answer": "18"}, {"id": "e2", "question": Q2, "answer": "180"}])
    tr = jsonl("train.jsonl", [
        {"question": "Completely different question about oranges and pears.", "answer": "18"},
        {"question": "Another unrelated question about cars?", "answer": "18"},
        {"question": Q2, "answer": "180"},
    ])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    # the prompt match is a real leak; a short target equal by chance never makes it a pair,
    # and the bare "18"/"180" matches are chance matches
    assert triples(r) == {("e2", "2", "prompt", "exact")}
    assert [(c.eval_id, c.reason, c.train_matches, c.examples) for c in r.chance] == [("e1", "short", 2, ("0", "1")), ("e2", "short", 1, ("2",))]
    s = r.summary()
    assert s["contaminated"]["count"] == 1 and s["chance_target_matches"]["count"] == 2
    # chance matches do not gate by default; `--fail-on chance` makes them gate
    tr2 = jsonl("train2.jsonl", [{"question": "Unrelated question about kites.", "answer": "18"}])
    only_chance = leakcheck.scan(tr2, ev, EXACT_NORM)
    assert only_chance.findings == () and len(only_chance.chance) == 1
    assert exit_code(only_chance, EXACT_NORM.policy) == 0
    assert exit_code(only_chance, leakcheck.Policy.parse("exact,chance")) == 1


def test_generic_targets_hitting_many_train_records_are_chance(jsonl):
    generic = "I am sorry, but I cannot help with that request because it is unsafe."
    ev = jsonl("eval.jsonl", [{"id": "e", "prompt": "How do I pick a lock?", "completion": generic}])
    tr = jsonl("train.jsonl", [{"prompt": f"Unrelated harmful request number {i}", "completion": generic} for i in range(12)])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.findings == ()
    assert [(c.eval_id, c.reason, c.train_matches) for c in r.chance] == [("e", "generic", 12)]
    # at or under the limit they are real target leaks, one finding per train record
    r2 = leakcheck.scan(tr, ev, ScanConfig(levels=("exact",), max_target_hits=12))
    assert len(by_kind(r2, "target")) == 12 and r2.chance == ()


def _rubric(criteria: list[str], cluster: list[str]) -> list[dict]:
    out = [{"criterion": c, "points": 5, "tags": ["level:example", "axis:accuracy"]} for c in criteria]
    out += [{"criterion": c, "points": 3, "tags": ["level:cluster", "axis:context_awareness"]} for c in cluster]
    return out


CLUSTER = ["Response seeks more context when needed.", "Response is appropriately concise."]


def test_rubric_banks_reordered_are_the_same_target_and_cluster_criteria_do_not_match(jsonl):
    bank = ["Advises urgent care for chest pain radiating to the arm.", "Mentions calling emergency services.", "Does not recommend aspirin for a known allergy."]
    ev = jsonl("eval.jsonl", [
        {"prompt_id": "ev-1", "prompt": [{"role": "user", "content": "I have chest pain going down my left arm, what should I do?"}], "rubrics": _rubric(bank, CLUSTER)},
        {"prompt_id": "ev-2", "prompt": [{"role": "user", "content": "Is it safe to take ibuprofen with coffee?"}], "rubrics": _rubric(["States ibuprofen and caffeine have no major interaction."], CLUSTER)},
    ])
    tr = jsonl("train.jsonl", [
        # reworded prompt, same bank in another order: the label leaked
        {"prompt_id": "tr-1", "prompt": [{"role": "user", "content": "My left arm hurts and my chest is tight. Advice?"}], "rubrics": _rubric(list(reversed(bank)), CLUSTER[::-1])},
        # shares only the cluster criteria with both eval records
        {"prompt_id": "tr-2", "prompt": [{"role": "user", "content": "How much water should I drink?"}], "rubrics": _rubric(["Suggests about 2 liters a day for adults."], CLUSTER)},
    ])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == "healthbench" and r.eval.fields["id"] == "prompt_id"
    assert triples(r) == {("ev-1", "tr-1", "target", "exact")}


def test_verl_rubric_variant_with_dict_tags(tmp_path: Path):
    def row(i: int, prompt: str, crits: list[str]) -> dict:
        rub = [{"criterion": c, "points": 2, "tags": {"level": "example", "axis": "accuracy"}} for c in crits]
        rub.append({"criterion": CLUSTER[0], "points": 1, "tags": {"level": "cluster", "axis": "completeness"}})
        return {"data_source": "healthbench", "prompt": [{"role": "user", "content": prompt}],
                "reward_model": {"style": "rubric", "rubrics": rub}, "extra_info": {"index": i}}

    crit = ["Recommends seeing a dermatologist for a changing mole.", "Mentions the ABCDE rule."]
    ev = tmp_path / "eval.parquet"
    tr = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([row(0, "My mole changed color.", crit), row(1, "I have a cold.", ["Suggests rest and fluids for a common cold."])]), ev)
    pq.write_table(pa.Table.from_pylist([row(0, "A mole on my back looks different now.", crit[::-1]), row(1, "Headache?", ["Asks about headache duration."])]), tr)
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == "verl-rubric" and r.eval.fields["target"] == "reward_model.rubrics"
    assert triples(r) == {("0", "0", "target", "exact")}


def _verl_rows(n: int, leak_from: dict[int, int] | None = None, json_strings: bool = False) -> list[dict]:
    rows = []
    for i in range(n):
        doc = f"Reference document {i}: " + " ".join(f"word{i}_{k}" for k in range(40))
        rm = {"style": "rule", "ground_truth": doc}
        ei = {"split": "test", "index": i}
        rows.append({
            "data_source": "collabllm/medium",
            "prompt": [{"role": "system", "content": "You are a writer."}, {"role": "user", "content": f"Write document number {i} about topic {i * 7}."}],
            "ability": "writing",
            "reward_model": json.dumps(rm) if json_strings else rm,
            "extra_info": json.dumps(ei) if json_strings else ei,
        })
    return rows


def test_verl_parquet_structs_and_json_string_columns(tmp_path: Path):
    """Eval stores reward_model/extra_info as JSON strings (as some uploads do), train as structs."""
    ev_rows = _verl_rows(6, json_strings=True)
    tr_rows = _verl_rows(12)
    for j, r in enumerate(tr_rows):
        r["extra_info"] = {"split": "train", "index": 100 + j}
        r["prompt"] = [r["prompt"][0], {"role": "user", "content": f"Train-only writing task {j}."}]
        r["reward_model"] = {"style": "rule", "ground_truth": f"Train-only document {j} " * 20}
    # train rows 2 and 5 are eval items 2 and 5 (prompt and document); row 7 has eval 3's prompt only
    for j in (2, 5):
        tr_rows[j]["prompt"] = ev_rows[j]["prompt"]
        tr_rows[j]["reward_model"] = json.loads(ev_rows[j]["reward_model"])
    tr_rows[7]["prompt"] = ev_rows[3]["prompt"]
    ev = tmp_path / "eval.parquet"
    tr = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(ev_rows), ev)
    pq.write_table(pa.Table.from_pylist(tr_rows), tr)
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == r.train.format == "verl"
    assert r.eval.fields == {"prompt": "prompt", "target": "reward_model.ground_truth", "id": "extra_info.index", "group": None}
    assert triples(r) == {("2", "102", "pair", "exact"), ("5", "105", "pair", "exact"), ("3", "107", "prompt", "exact")}


def test_group_leakage_across_turn_prefixes(jsonl):
    """CollabLLM multi-turn rows: same conv_id on both sides is a leak even when turns differ."""

    def turn(conv: str, k: int, task: str) -> dict:
        msgs = [{"role": "user", "content": f"{task} (turn 1)"}]
        for j in range(1, k):
            msgs += [{"role": "assistant", "content": f"Draft {j} of {task}"}, {"role": "user", "content": f"Please revise part {j} of it."}]
        return {"conv_id": conv, "turn_id": k, "prompt": msgs, "single_turn_prompt": task,
                "single_turn_completion": f"Final document for: {task}. " * 3, "completion": f"Draft {k}"}

    ev = jsonl("eval.jsonl", [turn("c1", 3, "Write a poem about rivers"), turn("c9", 1, "Write an essay on bees")])
    tr = jsonl("train.jsonl", [turn("c1", 1, "Write a poem about rivers"), turn("c1", 2, "Write a poem about rivers"), turn("c2", 1, "Write a memo on budgets")])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == "collabllm-multiturn" and r.eval.fields["group"] == "conv_id"
    # turn 3 in eval vs turns 1, 2 in train: the prompts differ, the reference answer is the same
    assert triples(r) == {("0", "0", "target", "exact"), ("0", "1", "target", "exact"),
                          ("0", "0", "group", "exact"), ("0", "1", "group", "exact")}
    assert {f.group for f in r.findings} == {"c1"}
    # with the target field switched off, the conversation id still finds them
    r2 = leakcheck.scan(tr, ev, ScanConfig(levels=("exact",), train_fields=Fields(target="none"), eval_fields=Fields(target="none")))
    assert triples(r2) == {("0", "0", "group", "exact"), ("0", "1", "group", "exact")}


def test_duplicates_inside_eval_are_reported_apart(jsonl):
    ev = jsonl("eval.jsonl", [
        {"question": Q1, "answer": A1}, {"question": Q2, "answer": A2}, {"question": Q1.upper(), "answer": A1},
        {"question": Q3, "answer": A3}, {"question": Q3, "answer": "Other solution, quite long, with many words in it."},
    ])
    tr = jsonl("train.jsonl", [{"question": "nothing", "answer": "to see here at all"}])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.findings == ()
    assert [(d.kind, d.level, d.ids) for d in r.eval_duplicates] == [("pair", "normalized", ("0", "2")), ("prompt", "exact", ("3", "4"))]
    assert r.summary()["eval_duplicates"] == {"groups": 2, "records": 4}


def test_field_overrides_with_dotted_paths_and_indexes(jsonl):
    ev = jsonl("eval.jsonl", [{"uid": "u1", "data": {"q": Q1, "sol": [{"text": "first"}, {"text": A1}]}}])
    tr = jsonl("train.jsonl", [chat(Q1, A1, system="sys"), chat(Q2, A2)])
    cfg = ScanConfig(
        levels=("exact",),
        eval_fields=Fields(prompt="data.q", target="data.sol[-1].text", id="uid"),
        train_fields=Fields(prompt="messages[1].content", target="messages[-1].content"),
    )
    r = leakcheck.scan(tr, ev, cfg)
    assert r.eval.format == "custom" and r.train.format == "openai-messages+custom"
    assert triples(r) == {("u1", "0", "pair", "exact")}
    assert r.findings[0].train_field == "messages[1].content"


@pytest.mark.parametrize("fmt", ["jsonl.gz", "json", "csv", "parquet", "hf", "folder", "glob"])
def test_every_input_format_gives_the_same_findings(tmp_path: Path, fmt: str):
    ev_rows = [{"question": Q1, "answer": A1}, {"question": Q3, "answer": A3}]
    tr_rows = [{"question": Q2, "answer": A2}, {"question": Q1, "answer": A1}, {"question": "x " + Q3, "answer": A3}]
    ev = write_jsonl(tmp_path / "eval.jsonl", ev_rows)
    if fmt == "jsonl.gz":
        tr = tmp_path / "train.jsonl.gz"
        with gzip.open(tr, "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in tr_rows)
    elif fmt == "json":
        tr = tmp_path / "train.json"
        tr.write_text(json.dumps(tr_rows, indent=1))
    elif fmt == "csv":
        import csv

        tr = tmp_path / "train.csv"
        with open(tr, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["question", "answer"])
            w.writeheader()
            w.writerows(tr_rows)
    elif fmt == "parquet":
        tr = tmp_path / "train.parquet"
        pq.write_table(pa.Table.from_pylist(tr_rows), tr)
    elif fmt == "hf":
        import datasets

        tr = tmp_path / "train_hf"
        datasets.Dataset.from_list(tr_rows).save_to_disk(str(tr))
    else:
        shards = tmp_path / "shards"
        shards.mkdir()
        write_jsonl(shards / "part-0.jsonl", tr_rows[:2])
        pq.write_table(pa.Table.from_pylist(tr_rows[2:]), shards / "part-1.parquet")
        tr = shards if fmt == "folder" else tmp_path / "shards" / "part-*"
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.train.records == 3
    assert triples(r) == {("0", "1", "pair", "exact"), ("1", "2", "target", "exact")}


@needs_shared
def test_mbpp_official_splits_natural_duplicates(tmp_path: Path):
    rows = [json.loads(line) for line in open(SHARED_DATA / "mbpp" / "mbpp.jsonl")]
    tr = write_jsonl(tmp_path / "train.jsonl", [r for r in rows if 601 <= r["task_id"] <= 974])
    te = write_jsonl(tmp_path / "test.jsonl", [r for r in rows if 11 <= r["task_id"] <= 510])
    r = leakcheck.scan(tr, te, EXACT_NORM)
    assert r.eval.format == "mbpp" and r.eval.fields["id"] == "task_id"
    # cross-checked by brute force below: every equal text/code between the splits
    assert triples(r) == {
        ("67", "608", "target", "normalized"),
        ("216", "872", "prompt", "exact"),
        ("217", "602", "prompt", "exact"),
        ("248", "704", "pair", "exact"),  # prompt exact, code normalized: counted at the stronger field
    }
    norm = leakcheck.canon.normalize
    test = [x for x in rows if 11 <= x["task_id"] <= 510]
    train = [x for x in rows if 601 <= x["task_id"] <= 974]
    brute = {(str(a["task_id"]), str(b["task_id"]), fld) for a in test for b in train for fld in ("text", "code") if norm(a[fld]) == norm(b[fld])}
    assert brute == {("67", "608", "code"), ("216", "872", "text"), ("217", "602", "text"), ("248", "704", "text"), ("248", "704", "code")}


def test_in_memory_inputs_dataset_dataframes_and_lists():
    import datasets
    import polars as pl

    ev = [{"id": "q1", "question": Q1, "answer": A1}, {"id": "q3", "question": Q3, "answer": A3}]
    tr = [chat(Q2, A2), chat(Q1, A1)]
    expected = {("q1", "1", "pair", "exact")}
    for make_train in (lambda: tr, lambda: datasets.Dataset.from_list(tr), lambda: iter(tr)):
        for evs in (ev, pl.DataFrame(ev), datasets.Dataset.from_list(ev)):
            r = leakcheck.scan(make_train(), evs, EXACT_NORM)
            assert triples(r) == expected, type(evs)
    assert leakcheck.scan(tr, ev, EXACT_NORM).train.path == "<train records>"
    with pytest.raises(leakcheck.LeakcheckError, match="eval: cannot read a dict"):
        leakcheck.scan(tr, {"question": Q1}, EXACT_NORM)


def test_local_dataset_repo_with_several_splits_needs_one_split(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "README.md").write_text("---\nlicense: mit\n---\n# a dataset\n")
    rows = [{"question": Q1, "answer": A1}, {"question": Q2, "answer": A2}]
    pq.write_table(pa.Table.from_pylist(rows), repo / "data" / "train-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist(rows[:1]), repo / "data" / "test-00000-of-00001.parquet")
    with pytest.raises(leakcheck.InputError) as ei:
        leakcheck.scan(repo, repo / "data" / "test-00000-of-00001.parquet", EXACT_NORM)
    assert str(ei.value) == f"{repo}: the folder mixes several splits (test, train); pick one, e.g. {repo}::train"
    r = leakcheck.scan(str(repo / "data" / "train-*.parquet"), repo / "data" / "test-00000-of-00001.parquet", EXACT_NORM)
    assert triples(r) == {("0", "0", "pair", "exact")}
    r = leakcheck.scan(f"{repo}::train", f"{repo}::test", EXACT_NORM)
    assert triples(r) == {("0", "0", "pair", "exact")} and r.train.path == f"{repo}::train"
    with pytest.raises(leakcheck.InputError) as ei:
        leakcheck.scan(f"{repo}::validation", f"{repo}::test", EXACT_NORM)
    assert str(ei.value) == f"{repo}::validation: no data files of split 'validation'; splits found: test, train"


def test_saved_dataset_dict_splits(tmp_path: Path):
    import datasets

    rows = [{"question": Q1, "answer": A1}, {"question": Q2, "answer": A2}]
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows), "test": datasets.Dataset.from_list(rows[1:])})
    dd.save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(leakcheck.InputError) as ei:
        leakcheck.scan(tmp_path / "dd", tmp_path / "dd", EXACT_NORM)
    assert str(ei.value) == f"{tmp_path / 'dd'}: is a DatasetDict with splits test, train; pick one, e.g. {tmp_path / 'dd'}::test"
    r = leakcheck.scan(f"{tmp_path / 'dd'}::train", f"{tmp_path / 'dd'}::test", EXACT_NORM)
    assert triples(r) == {("0", "1", "pair", "exact")}


def test_verl_collabllm_recipe_split_per_turn(tmp_path: Path):
    """The likely cause of the CollabLLM case: rows per conversation turn, then a random split.

    Shaped like verl's CollabLLM recipe output: system prompt + turns as `prompt`, the
    single-turn completion as `reward_model.ground_truth`, the original row (with `conv_id`)
    copied into `extra_info`, a uuid as `index`.
    """

    def row(conv: int, turn: int) -> dict:
        task = f"Write a short article about topic {conv} for readers of newsletter {conv * 3}."
        msgs = [{"role": "system", "content": "The assistant is designed to be helpful, proactive, and highly interactive."},
                {"role": "user", "content": task}]
        for t in range(1, turn):
            msgs += [{"role": "assistant", "content": f"Draft {t} for topic {conv}"}, {"role": "user", "content": f"Revise paragraph {t}, please."}]
        doc = f"Final article about topic {conv}. " + " ".join(f"sentence{conv}_{k}" for k in range(30))
        return {"prompt": msgs, "data_source": "collabllm", "index": f"uuid-{conv}-{turn}",
                "reward_model": {"style": "rule", "ground_truth": doc},
                "extra_info": {"conv_id": f"conv-{conv}", "turn_id": turn, "single_turn_completion": doc,
                               "interaction_kwargs": {"name": "collabllm", "single_turn_prompt": task}}}

    rows = [row(c, t) for c in range(6) for t in range(1, 4)]
    # a random per-turn split: conversations 1 and 4 have turns on both sides
    eval_keys = {(1, 3), (4, 2), (5, 1), (5, 2), (5, 3)}
    ev = [r for r in rows if (int(r["index"].split("-")[1]), int(r["index"].split("-")[2])) in eval_keys]
    tr = [r for r in rows if r not in ev]
    pq.write_table(pa.Table.from_pylist(tr), tmp_path / "rl_train.parquet")
    pq.write_table(pa.Table.from_pylist(ev), tmp_path / "rl_validation.parquet")
    r = leakcheck.scan(tmp_path / "rl_train.parquet", tmp_path / "rl_validation.parquet", EXACT_NORM)
    assert r.eval.format == "verl" and r.eval.fields["id"] == "index" and r.eval.fields["group"] == "extra_info.conv_id"
    # the prompts differ (other turns), the reward target is the same document: target leaks
    assert triples(r) == {
        ("uuid-1-3", "uuid-1-1", "target", "exact"), ("uuid-1-3", "uuid-1-2", "target", "exact"),
        ("uuid-4-2", "uuid-4-1", "target", "exact"), ("uuid-4-2", "uuid-4-3", "target", "exact"),
        # the same conversation on both sides is evidence of its own, whatever else matched
        ("uuid-1-3", "uuid-1-1", "group", "exact"), ("uuid-1-3", "uuid-1-2", "group", "exact"),
        ("uuid-4-2", "uuid-4-1", "group", "exact"), ("uuid-4-2", "uuid-4-3", "group", "exact"),
    }
    assert {f.group for f in r.findings} == {"conv-1", "conv-4"}
    assert r.summary()["contaminated"] == {"count": 2, "percent": 40.0}


@pytest.mark.parametrize("target_key", ["ground_truth", "answer", "solution"])
def test_grpo_style_prompt_with_reference(jsonl, target_key):
    ev = jsonl("eval.jsonl", [{"prompt": [{"role": "user", "content": Q1}], target_key: A1}])
    tr = jsonl("train.jsonl", [{"prompt": Q1, target_key: A1}, {"prompt": Q2, target_key: A2}])
    r = leakcheck.scan(tr, ev, EXACT_NORM)
    assert r.eval.format == r.train.format == f"prompt-{target_key}"
    assert triples(r) == {("0", "0", "pair", "exact")}
