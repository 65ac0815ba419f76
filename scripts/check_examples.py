#!/usr/bin/env python3
"""Independent sanity check of the bundled example datasets in leakcheck/data/.

It does not import the generator: it re-reads every file with pyarrow (and polars
when available) and verifies the planted leaks listed in each expected*.json with
plain string comparisons, plus the absence of any other exact leak.

    python scripts/check_examples.py [--data leakcheck/data]
"""
import argparse
import json
import os
import re
import sys
import unicodedata

import pyarrow.parquet as pq

try:
    import polars as pl
except ImportError:  # polars is optional
    pl = None

FAIL = []


def check(cond, msg):
    if not cond:
        FAIL.append(msg)
        print("FAIL:", msg)


def toks(s):
    return re.findall(r"[a-z0-9']+", s.lower())


def grams(s, n):
    t = toks(s)
    return {tuple(t[i:i + n]) for i in range(len(t) - n + 1)}


def jac(a, b):
    return len(a & b) / len(a | b) if a | b else 0.0


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# --------------------------------------------------------------------------
def check_collab(d):
    tr = pq.read_table(os.path.join(d, "train.parquet"))
    ev = pq.read_table(os.path.join(d, "eval.parquet"))
    print(tr.schema, "\n", ev.schema, sep="")
    if pl is not None:
        check(pl.read_parquet(os.path.join(d, "train.parquet")).height == 400, "polars train rows")
        check(pl.read_parquet(os.path.join(d, "eval.parquet")).height == 100, "polars eval rows")
    tr, ev = tr.to_pylist(), ev.to_pylist()
    check(len(tr) == 400 and len(ev) == 100, "collab row counts")
    for r in ev:
        r["reward_model"] = json.loads(r["reward_model"])
        r["extra_info"] = json.loads(r["extra_info"])
    exp = json.load(open(os.path.join(d, "expected_leaks.json")))
    leaked = exp["eval_index_leaked"]
    check(len(leaked) == 35 and leaked == sorted(set(leaked)), "35 sorted leaked indices")
    check(leaked != list(range(35)), "leaked rows are not simply the first 35")
    systems = {r["prompt"][0]["content"] for r in tr + ev}
    check(len(systems) == 1, "one shared system prompt")
    for split, rows in (("train", tr), ("test", ev)):
        for i, r in enumerate(rows):
            check(r["data_source"] == "collabllm/medium" and r["ability"] == "writing", "constants")
            check([m["role"] for m in r["prompt"]] == ["system", "user"], "roles")
            check(r["reward_model"]["style"] == "rule", "style")
            check(r["extra_info"]["split"] == split and r["extra_info"]["index"] == i, "extra_info")
            check(re.fullmatch(r"medium-\d{5}", r["extra_info"]["task_id"]) is not None, "task_id")
            n = len(r["prompt"][1]["content"].split())
            check(40 <= n <= 120, "prompt length %d" % n)
            n = len(r["reward_model"]["ground_truth"].split())
            check(150 <= n <= 400, "doc length %d" % n)
    tr_user = {}
    tr_doc = {}
    for j, r in enumerate(tr):
        tr_user.setdefault(r["prompt"][1]["content"], []).append(j)
        tr_doc.setdefault(r["reward_model"]["ground_truth"], []).append(j)
    check(len(tr_user) == 400 and len(tr_doc) == 400, "train prompts/docs are unique")
    found = {}
    for i, r in enumerate(ev):
        pu = tr_user.get(r["prompt"][1]["content"], [])
        pd = tr_doc.get(r["reward_model"]["ground_truth"], [])
        if pu or pd:
            check(pu == pd and len(pu) == 1, "eval %d: prompt and target leak to the same row" % i)
            found[i] = pu[0]
            t = tr[pu[0]]
            check(t["prompt"] == r["prompt"], "eval %d: whole prompt list identical" % i)
    check(sorted(found) == leaked, "collab leaked set matches expected")
    check({str(k): v for k, v in found.items()} == exp["train_rows"], "collab train rows match")
    rows = sorted(found.values())
    gaps = [y - x for x, y in zip(rows, rows[1:])]
    check(rows[-1] - rows[0] > 200 and sum(g == 1 for g in gaps) < 10, "leaked train rows scattered")
    # clean eval rows: no shared 8-gram in documents, no near-duplicate prompts
    train_doc_grams = set()
    for r in tr:
        train_doc_grams |= grams(r["reward_model"]["ground_truth"], 8)
    train_prompt_tri = [grams(r["prompt"][1]["content"], 3) for r in tr]
    max_j, shared = 0.0, 0
    for i, r in enumerate(ev):
        if i in found:
            continue
        shared += len(grams(r["reward_model"]["ground_truth"], 8) & train_doc_grams)
        e = grams(r["prompt"][1]["content"], 3)
        max_j = max(max_j, max(jac(e, t) for t in train_prompt_tri))
    check(shared == 0, "clean eval docs share %d 8-grams with train" % shared)
    check(max_j < 0.25, "clean eval prompt max 3-gram Jaccard %.3f" % max_j)
    print("collabllm_medium: %d leaks found; clean eval: 0 shared doc 8-grams, max prompt "
          "3-gram Jaccard %.3f" % (len(found), max_j))


# --------------------------------------------------------------------------
def hb_example(rec):
    return [(c["criterion"], c["points"], tuple(c["tags"])) for c in rec["rubrics"]
            if "level:example" in c["tags"]]


def hb_user(rec):
    return "\n".join(m["content"] for m in rec["prompt"] if m["role"] == "user")


def check_hb_records(ev, tr, exp, label, raw_lines=None):
    check(len(ev) == 40 and len(tr) == 160, label + " counts")
    cluster_texts = set()
    for r in ev + tr:
        ex = hb_example(r)
        check(5 <= len(ex) <= 12, label + " example criteria count %d" % len(ex))
        cl = [c for c in r["rubrics"] if "level:cluster" in c["tags"]]
        check(2 <= len(cl) <= 3, label + " cluster count")
        cluster_texts |= {c["criterion"] for c in cl}
        check(len(ex) + len(cl) == len(r["rubrics"]), label + " every criterion tagged with a level")
        check(all(m["role"] in ("user", "assistant") for m in r["prompt"]), label + " roles")
    check(len(cluster_texts) <= 8, label + " shared cluster pool <= 8")
    check(any(c["points"] < 0 for r in ev + tr for c in r["rubrics"]), label + " negative points exist")
    leaks = exp["leaks"]
    check(len(leaks) == 11, label + " 11 leaks")
    kinds = [l["kind"] for l in leaks]
    check(kinds.count("rubric_reordered_prompt_reworded") == 6 and kinds.count("full_duplicate") == 3
          and kinds.count("prompt_identical_rubric_different") == 2, label + " leak kinds 6/3/2")
    for l in leaks:
        e, t = ev[l["eval_row"]], tr[l["train_row"]]
        check(e["prompt_id"] == l["eval_prompt_id"] and t["prompt_id"] == l["train_prompt_id"],
              label + " ids")
        ee, te = hb_example(e), hb_example(t)
        if l["kind"] == "rubric_reordered_prompt_reworded":
            check(sorted(ee) == sorted(te) and ee != te, label + " (a) same bank, different order")
            check(hb_user(e) != hb_user(t), label + " (a) prompt differs")
            wj = jac(set(toks(hb_user(e))), set(toks(hb_user(t))))
            check(wj < 0.3, label + " (a) reworded prompt word Jaccard %.2f" % wj)
        elif l["kind"] == "full_duplicate":
            check(e == t, label + " (b) record identical")
            if raw_lines:
                check(raw_lines[0][l["eval_row"]] == raw_lines[1][l["train_row"]], "(b) line identical")
        else:
            check(e["prompt"] == t["prompt"], label + " (c) prompt identical")
            check(not ({c[0] for c in ee} & {c[0] for c in te}), label + " (c) banks disjoint")
    decoys = exp["decoys"]
    check(len(decoys) == 2 and {d["kind"] for d in decoys} == {"rubric_same_criteria_other_points"}, label + " 2 decoys")
    for d in decoys:
        e, t = ev[d["eval_row"]], tr[d["train_row"]]
        check(e["prompt_id"] == d["eval_prompt_id"] and t["prompt_id"] == d["train_prompt_id"], label + " decoy ids")
        ee, te = hb_example(e), hb_example(t)
        check(sorted((c, tg) for c, _, tg in ee) == sorted((c, tg) for c, _, tg in te), label + " (d) same criteria and tags")
        pts = {c: p for c, p, _ in ee}
        check(all(p != pts[c] and (p > 0) == (pts[c] > 0) for c, p, _ in te), label + " (d) every criterion other points, same sign")
        wj = jac(set(toks(hb_user(e))), set(toks(hb_user(t))))
        check(wj < 0.3, label + " (d) reworded prompt word Jaccard %.2f" % wj)
    # no other exact leak
    leaked_rows = {l["eval_row"]: l["train_row"] for l in leaks + decoys}
    tr_prompt = {}
    tr_crit = {}
    for j, r in enumerate(tr):
        tr_prompt.setdefault(json.dumps(r["prompt"]), set()).add(j)
        tr_prompt.setdefault(hb_user(r), set()).add(j)
        for c in hb_example(r):
            tr_crit.setdefault(c[0], set()).add(j)
    for i, r in enumerate(ev):
        hits = tr_prompt.get(json.dumps(r["prompt"]), set()) | tr_prompt.get(hb_user(r), set())
        crit_hits = set()
        for c in hb_example(r):
            crit_hits |= tr_crit.get(c[0], set())
        allowed = {leaked_rows[i]} if i in leaked_rows else set()
        check(hits <= allowed and crit_hits <= allowed,
              label + " eval %d: unexpected exact overlap with train rows %s" % (i, (hits | crit_hits) - allowed))
    print("%s: 11 planted leaks and 2 decoys verified; no other exact prompt or example-criterion overlap" % label)


def check_healthbench(d, dv):
    ev_lines = open(os.path.join(d, "eval.jsonl"), encoding="utf-8").read().splitlines()
    tr_lines = open(os.path.join(d, "train.jsonl"), encoding="utf-8").read().splitlines()
    ev, tr = [json.loads(x) for x in ev_lines], [json.loads(x) for x in tr_lines]
    for r in ev + tr:
        check(list(r) == ["prompt_id", "prompt", "rubrics", "example_tags"], "hb keys")
        check(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                           r["prompt_id"]) is not None, "uuid")
        check(all(t.startswith("theme:") for t in r["example_tags"]), "theme tags")
    exp = json.load(open(os.path.join(d, "expected_leaks.json")))
    check_hb_records(ev, tr, exp, "healthbench_rubrics", (ev_lines, tr_lines))
    # verl variant
    tv, evv = pq.read_table(os.path.join(dv, "train.parquet")), pq.read_table(os.path.join(dv, "eval.parquet"))
    print(tv.schema)
    if pl is not None:
        check(pl.read_parquet(os.path.join(dv, "train.parquet")).height == 160, "polars verl rows")
    expv = json.load(open(os.path.join(dv, "expected_leaks.json")))
    check(expv["leaks"] == exp["leaks"] and expv["decoys"] == exp["decoys"], "verl expected leaks and decoys identical")

    def back(rows, src):
        out = []
        for i, (r, s) in enumerate(zip(rows, src)):
            check(r["data_source"] == "healthbench" and r["reward_model"]["style"] == "rubric", "verl consts")
            check(r["extra_info"] == {"prompt_id": s["prompt_id"], "index": i}, "verl extra_info")
            check(r["prompt"] == s["prompt"], "verl prompt")
            rub = []
            for c, sc in zip(r["reward_model"]["rubrics"], s["rubrics"]):
                tags = ["level:" + c["tags"]["level"], "axis:" + c["tags"]["axis"]]
                check([t for t in sc["tags"] if not t.startswith("cluster:")] == tags, "verl tags")
                rub.append({"criterion": c["criterion"], "points": c["points"], "tags": tags})
            check(len(rub) == len(s["rubrics"]), "verl rubric count")
            out.append({"prompt_id": r["extra_info"]["prompt_id"], "prompt": r["prompt"], "rubrics": rub})
        return out

    evb, trb = back(evv.to_pylist(), ev), back(tv.to_pylist(), tr)
    check_hb_records(evb, trb, expv, "healthbench_rubrics_verl")


# --------------------------------------------------------------------------
def norm(s):
    s = unicodedata.normalize("NFKC", s)
    s = re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", s)
    return re.sub(r"\s+", " ", s.casefold()).strip()


def check_chat(d):
    ev = read_jsonl(os.path.join(d, "eval_questions.jsonl"))
    tr = read_jsonl(os.path.join(d, "train_chat.jsonl"))
    exp = json.load(open(os.path.join(d, "expected.json")))
    check(len(ev) == 10 and len(tr) == 30, "chat counts")
    for e in ev:
        check(re.search(r"\n#### -?\d+$", e["answer"]) is not None, "gsm8k answer format " + e["id"])
    for t in tr:
        check([m["role"] for m in t["messages"]] == ["system", "user", "assistant"], "chat roles")
        check(t["messages"][0]["content"] == "You are a helpful math tutor.", "chat system")
    by_id = {e["id"]: e for e in ev}
    planted = {(l["eval_id"], l["train_row"]): l for l in exp["leaks"]}
    check(len(exp["leaks"]) == 5, "five planted chat leaks")
    for e in ev:
        for j, t in enumerate(tr):
            u, a = t["messages"][1]["content"], t["messages"][2]["content"]
            raw = (u == e["question"], a == e["answer"])
            nrm = (norm(u) == norm(e["question"]), norm(a) == norm(e["answer"]))
            l = planted.get((e["id"], j))
            if l is None:
                check(not any(nrm), "unexpected chat overlap %s / row %d" % (e["id"], j))
                continue
            want = {"prompt+target": (True, True), "prompt": (True, False), "target": (False, True)}[l["field"]]
            check(nrm == want, "chat %s normalized match %s" % (e["id"], nrm))
            if l["match"] == "exact":
                check(raw == want, "chat %s exact match %s" % (e["id"], raw))
            else:
                check(raw == (False, False), "chat %s must not be byte-identical" % e["id"])
                check(re.findall(r"\d+", unicodedata.normalize("NFKC", u))
                      == re.findall(r"\d+", e["question"]), "chat digits identical after NFKC")
                check("\u200b" in u and "\ufb01" in u and any("\uff10" <= ch <= "\uff19" for ch in u),
                      "chat normalized variant has ZWSP, ligature and fullwidth digits")
            if l["field"] == "target":
                check(len(e["answer"].split()) > 10, "target-only answer is long")
    counts = {}
    for l in exp["leaks"]:
        counts[(l["field"], l["match"])] = counts.get((l["field"], l["match"]), 0) + 1
    check(counts == {("prompt+target", "exact"): 2, ("prompt+target", "normalized"): 1,
                     ("prompt", "exact"): 1, ("target", "exact"): 1}, "chat leak mix")
    check(set(by_id) - {l["eval_id"] for l in exp["leaks"]} == set(exp["not_leaked"]), "not_leaked list")
    print("chat_small: 5 planted leaks verified; no other raw or normalized overlap")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.path.join(os.path.dirname(here), "leakcheck", "data"))
    a = ap.parse_args()
    check_collab(os.path.join(a.data, "collabllm_medium"))
    check_healthbench(os.path.join(a.data, "healthbench_rubrics"),
                      os.path.join(a.data, "healthbench_rubrics_verl"))
    check_chat(os.path.join(a.data, "chat_small"))
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.data) for f in fs)
    check(total < 2 * 1024 * 1024, "total size %d bytes" % total)
    print("total size: %.1f KB" % (total / 1024))
    if FAIL:
        print("%d check(s) failed" % len(FAIL))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
