"""The command line: parse, call one library function, render, exit. Nothing else lives here.

Exit codes: 0 no leakage at a gated level, 1 leakage found, 2 usage or input error,
3 clean but rows were skipped (``--on-error skip`` without ``--allow-partial``),
128 + the signal number when ended by SIGHUP (129), SIGINT (130) or SIGTERM (143).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import click

from . import __version__
from .config import (
    ContainedConfig,
    Fields,
    Limit,
    LoadedConfig,
    NearConfig,
    Policy,
    ScanConfig,
    SemanticConfig,
    load_config,
    parse_levels,
)
from .errors import LeakcheckError, UsageError
from .report._atomic import check_outputs, on_signal, stream_of
from .report.terminal import render

EXIT_ERROR = 2


def _fail(msg: str) -> None:
    click.echo(f"leakcheck: error: {msg}", err=True)
    sys.exit(EXIT_ERROR)


#: Signals that end leakcheck like Ctrl-C: temporary files removed, one line, exit 128 + the signal number.
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (a KeyboardInterrupt) while the command runs."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    before = {s: signal.signal(s, on_signal) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


class _Group(click.Group):
    """Turns library errors into one line and exit 2; never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _signals_interrupt():
                return super().invoke(ctx)
        except LeakcheckError as exc:
            _fail(str(exc))
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt as exc:
            signum = getattr(exc, "signum", signal.SIGINT)
            click.echo(f"leakcheck: interrupted by {signal.Signals(signum).name}", err=True)
            sys.exit(128 + signum)
        except MemoryError:
            _fail("out of memory; scan a smaller eval set or use --levels exact,normalized")
        except Exception as exc:  # a bug: still one line, with a way to get the traceback
            if os.environ.get("LEAKCHECK_DEBUG"):
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}); rerun with LEAKCHECK_DEBUG=1 and report it")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="leakcheck")
def main() -> None:
    """Find train/eval leakage in LLM fine-tuning and RL datasets, field by field."""


def _pick(cli_value: Any, conf: dict[str, Any], key: str, default: Any) -> Any:
    if cli_value is not None:
        return cli_value
    return conf.get(key, default)


def _limits(cli: tuple[str, ...] | None, conf: dict[str, Any]) -> tuple[Limit, ...]:
    """The file's ``limits`` table, then each ``--limit``, which replaces the file's limit of the same item."""
    where = "[tool.leakcheck] limits"
    merged = {(lim.kind, lim.level): lim for lim in (Limit.parse(k, v, where) for k, v in conf.get("limits", {}).items())}
    merged.update({(lim.kind, lim.level): lim for lim in map(Limit.parse, cli or ())})
    return tuple(merged.values())


def _load_settings(path: str | None, quiet: bool = False) -> LoadedConfig:
    """The configuration file's settings; its warnings (unknown keys, with the closest valid key) go to standard error."""
    loaded = load_config(path)
    if not quiet:
        for w in loaded.warnings:
            click.echo(f"leakcheck: warning: {w}", err=True)
    return loaded


def build_config(opts: dict[str, Any], conf: dict[str, Any]) -> ScanConfig:
    """Merge CLI options over ``[tool.leakcheck]`` over defaults into a :class:`ScanConfig`."""
    for key in ("prompt_field", "target_field", "id_field", "group_field", "train_prompt_field", "train_target_field",
                "eval_prompt_field", "eval_target_field"):
        if opts.get(key) is not None and not opts[key].strip():
            raise UsageError(f"--{key.replace('_', '-')} is empty; pass a dotted field path such as question, "
                             "or leave the option out to detect the field")
    levels = _pick(opts.get("levels"), conf, "levels", "all")
    levels_t = parse_levels(levels if isinstance(levels, str) else ",".join(levels))
    fail_on = _pick(opts.get("fail_on"), conf, "fail_on", None)
    policy = Policy.parse(fail_on) if fail_on is not None else Policy()
    limits = _limits(opts.get("limits"), conf)
    if limits:
        policy = Policy(policy.items, policy.chance, limits)

    def side(name: str) -> Fields:
        return Fields(
            prompt=_pick(opts.get(f"{name}_prompt_field"), conf, f"{name}_prompt_field", None)
            or _pick(opts.get("prompt_field"), conf, "prompt_field", None),
            target=_pick(opts.get(f"{name}_target_field"), conf, f"{name}_target_field", None)
            or _pick(opts.get("target_field"), conf, "target_field", None),
            id=_pick(opts.get("id_field"), conf, "id_field", None),
            group=_pick(opts.get("group_field"), conf, "group_field", None),
        )

    d = ScanConfig()
    template_share = float(_pick(opts.get("template_share"), conf, "template_share", d.near.template_share))
    return ScanConfig(
        levels=levels_t,
        policy=policy,
        train_fields=side("train"),
        eval_fields=side("eval"),
        short_target_chars=int(_pick(opts.get("short_target_chars"), conf, "short_target_chars", d.short_target_chars)),
        max_target_hits=int(_pick(opts.get("max_target_hits"), conf, "max_target_hits", d.max_target_hits)),
        on_error=_pick(opts.get("on_error"), conf, "on_error", d.on_error),
        allow_partial=bool(_pick(opts.get("allow_partial") or None, conf, "allow_partial", False)),
        near=NearConfig(
            threshold=float(_pick(opts.get("near_threshold"), conf, "near_threshold", d.near.threshold)),
            shingle=int(_pick(opts.get("shingle"), conf, "shingle", d.near.shingle)),
            num_perm=int(_pick(opts.get("num_perm"), conf, "num_perm", d.near.num_perm)),
            lsh_fp_weight=float(_pick(opts.get("lsh_fp_weight"), conf, "lsh_fp_weight", d.near.lsh_fp_weight)),
            template_share=template_share,
        ),
        contained=ContainedConfig(
            ngram=int(_pick(opts.get("ngram"), conf, "ngram", d.contained.ngram)),
            threshold=float(_pick(opts.get("contained_threshold"), conf, "contained_threshold", d.contained.threshold)),
            template_share=template_share,
        ),
        semantic=SemanticConfig(
            threshold=_float_or_none(_pick(opts.get("semantic_threshold"), conf, "semantic_threshold", d.semantic.threshold)),
            code_threshold=_float_or_none(_pick(opts.get("semantic_code_threshold"), conf, "semantic_code_threshold", d.semantic.code_threshold)),
            anchored_threshold=float(_pick(opts.get("semantic_anchored_threshold"), conf, "semantic_anchored_threshold",
                                           d.semantic.anchored_threshold)),
            embedder=_pick(opts.get("embedder"), conf, "embedder", d.semantic.embedder),
        ),
    )


def _float_or_none(v: Any) -> float | None:
    return None if v is None else float(v)


def _stack(opts: list[Any], f: Any) -> Any:
    """``f`` with the click options ``opts``, in --help in their order."""
    for o in reversed(opts):
        f = o(f)
    return f


def _level_options(f: Any) -> Any:
    """The options that pick levels and their knobs (shared by scan and index)."""
    opts = [
        click.option("--levels", help="Levels to run, comma-separated: exact,normalized,near,contained,semantic "
                                      "(default: all = every level but semantic; all,semantic adds it)."),
        click.option("--prompt-field", help="Dotted path of the prompt on both sides, e.g. messages[0].content."),
        click.option("--target-field", help="Dotted path of the reward target, e.g. reward_model.ground_truth ('none': no target)."),
        click.option("--eval-prompt-field", help="Prompt path for the eval side only."),
        click.option("--eval-target-field", help="Target path for the eval side only."),
        click.option("--id-field", help="Dotted path of the record id (default: id, prompt_id, task_id, extra_info.index, ... else row number)."),
        click.option("--group-field", help="Dotted path of a group key such as a conversation id (default: conv_id if present)."),
        click.option("--on-error", type=click.Choice(["fail", "skip"]), help="Bad rows: fail (default) or skip and count them."),
        click.option("--short-target-chars", type=int, help="Target matches shorter than this are chance matches (default 20)."),
        click.option("--near-threshold", type=float, help="Jaccard threshold of the near level (default 0.6)."),
        click.option("--shingle", type=int, help="Word shingle size of the near level (default 3)."),
        click.option("--num-perm", type=int, help="MinHash permutations of the near level (default 128)."),
        click.option("--ngram", type=int, help="n of the contained level's word n-grams (default 13)."),
        click.option("--contained-threshold", type=float, help="Share of an eval item's n-grams that must occur in one train record (default 0.6)."),
        click.option("--template-share", type=float,
                     help="n-grams/shingles in at least this share of a file's texts are template, ignored by near/contained (default 0.05; 1 turns it off)."),
        click.option("--lsh-fp-weight", type=float,
                     help="Weight of false positives in choosing LSH bands/rows (default 0.02: favour recall, candidates are verified)."),
        click.option("--semantic-threshold", type=float,
                     help="Score a semantic match needs without a final answer to agree on (default 0.36; 0.46 with an embedder)."),
        click.option("--semantic-code-threshold", type=float, help="The same for an eval record that is code (default 0.28; 0.51 with an embedder)."),
        click.option("--semantic-anchored-threshold", type=float,
                     help="Score a semantic match needs when both records state the same final answer (default 0.44)."),
        click.option("--embedder", metavar="PATH|none",
                     help="semantic level: a local ONNX or sentence-transformers model folder, or none (default: the leakcheck[semantic] model if installed)."),
        click.option("--name", "names", multiple=True, metavar="NAME=PATH",
                     help="Name an eval set (default: from its file name, e.g. test for test.jsonl, gsm8k-test for gsm8k::test). Repeatable."),
    ]
    return _stack(opts, f)


def _policy_options(f: Any) -> Any:
    """The options of the configuration file, the limits, the baseline and the allowlist (scan)."""
    opts = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False),
                     help="The configuration file (default: the nearest leakcheck.toml, or pyproject.toml with [tool.leakcheck], here or above)."),
        click.option("--limit", "limits", multiple=True, metavar="ITEM=N|P%",
                     help="Allow up to N eval records (or P% of them) with this evidence, e.g. target:near=0.5%; repeatable. "
                          "ITEM as in --fail-on, which must not already fail on it."),
        click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False),
                     help="Accept the findings of this baseline (from leakcheck baseline); only new findings gate."),
        click.option("--allowlist", "allowlist_path", type=click.Path(dir_okay=False),
                     help="A TOML file of [[allow]] entries (eval_id or fingerprint, and reason): accepted overlaps, never gated."),
    ]
    return _stack(opts, f)


def _train_options(partial: str) -> Any:
    """The options of the train side that scan and clean share; ``partial`` says when --allow-partial applies."""
    opts = [
        click.option("--train-prompt-field", help="Prompt path for the train side only."),
        click.option("--train-target-field", help="Target path for the train side only."),
        click.option("--allow-partial", is_flag=True, default=None, help=f"With --on-error skip: exit 0 instead of 3 when {partial}."),
        click.option("--max-target-hits", type=int, help="Targets matching more train records than this are generic chance matches (default 10)."),
        click.option("-j", "--jobs", type=int,
                     help="Processes probing the train side (default: all cores; 1: this process only). Results do not depend on it."),
    ]

    return lambda f: _stack(opts, f)


def _named_evals(paths: tuple[str, ...], names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(name, path)`` per eval input, names from ``--name NAME=PATH`` or the path."""
    from .scan import name_of

    given: dict[str, str] = {}
    for item in names:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--name {item!r}: write NAME=PATH, e.g. --name gsm8k-test=data/test.jsonl")
        if path not in paths:
            raise UsageError(f"--name {item!r}: {path} is not one of the eval inputs ({', '.join(paths) or 'none'})")
        given[path] = name
    return [(given.get(p) or name_of(p, i), p) for i, p in enumerate(paths)]


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="TRAIN [EVAL]...")
@click.option("--index", "indexes", multiple=True, type=click.Path(dir_okay=False),
              help="A saved eval index (from leakcheck index) to scan against; repeatable, and may be combined with EVAL files.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the JSON report here (several eval sets: one file each, NAME inserted).")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False), help="Write the Markdown report here (charts as PNG files beside it).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the self-contained HTML report here.")
@click.option("--fail-on", help="What fails the gate, items OR-ed: levels (that level or stronger), kinds, kind:level, all, chance, "
              "any (all + chance), none. Default: all (every finding at every level that ran).")
@_level_options
@_train_options("rows were skipped and nothing leaked")
@click.option("--engine", type=click.Choice(["local", "ray"]),
              help="local (default): this machine (--jobs processes); ray: Ray Data on a Ray cluster (pip install 'leakcheck[ray]').")
@click.option("--ray-address", help="Ray cluster to join with --engine ray (default: RAY_ADDRESS, else a local Ray).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on standard error (default: on a terminal, off in CI).")
@click.option("--examples", type=int, help="Worst leaks to print (default 5).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit code speaks (--annotations still prints, being asked for).")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Write a SARIF 2.1.0 file for code scanning (all eval sets in one run).")
@click.option("--annotations", type=click.Choice(["github", "none"]),
              help="none (default) or github: an ::error (gated) or ::warning line per finding at its train file and line, a ::notice with totals.")
@click.option("--no-step-summary", is_flag=True, default=None,
              help="Do not append the Markdown summary to the file GITHUB_STEP_SUMMARY names (setting: step_summary = false).")
@_policy_options
def scan(paths: tuple[str, ...], indexes: tuple[str, ...], json_path: str | None, md_path: str | None, html_path: str | None,
         jobs: int | None, engine: str | None, ray_address: str | None, progress: bool | None, examples: int | None, quiet: bool,
         sarif_path: str | None, annotations: str | None, no_step_summary: bool | None,
         config_path: str | None, baseline_path: str | None, allowlist_path: str | None, **opts: Any) -> None:
    """Scan TRAIN for records of each EVAL set, field by field; exit 1 when leakage is found.

    TRAIN and EVAL are JSONL, JSON, Parquet or CSV files (.gz, .bz2, .xz, .zst too), folders
    or globs of shards, FOLDER::SPLIT or FOLDER::CONFIG/SPLIT of a local dataset repo, or
    Hugging Face datasets saved with save_to_disk. Several EVAL sets (and --index files)
    are checked in one pass over TRAIN, each with its own report and gate; the exit code is
    the worst of them.

    \b
    Example:
        leakcheck scan train.parquet test.parquet --json leaks.json --markdown leaks.md --html leaks.html
        leakcheck scan train/ --index benchmarks.lcx gsm8k_test.jsonl -j 2
        leakcheck scan train/ --index evals.lcx --json leaks.json --annotations github --sarif leaks.sarif   # in CI
    """
    from .engine import default_jobs
    from .gate import exit_code, severity
    from .scan import scan_index, start_learning

    train, evals = paths[0], _named_evals(paths[1:], opts.pop("names"))
    if not evals and not indexes:
        raise UsageError("scan: name at least one eval set: leakcheck scan TRAIN EVAL [EVAL...] or --index FILE.lcx")
    settings = _load_settings(config_path, quiet)
    conf = settings.settings
    config = build_config(opts, conf)
    jobs, engine = _pick(jobs, conf, "jobs", None), _pick(engine, conf, "engine", "local")
    ray_address, examples = _pick(ray_address, conf, "ray_address", None), _pick(examples, conf, "examples", 5)
    annotations = _pick(annotations, conf, "annotations", "none")
    step_summary = not no_step_summary and conf.get("step_summary", True)
    from .baseline import Accepting

    accepting = Accepting.load(baseline_path, allowlist_path, settings)
    loaded = _load_indexes(indexes, config)
    n_sets = len(evals) + sum(len(ix.sets) for ix in loaded)
    names = [n for n, _ in evals] + [s.name for ix in loaded for s in ix.sets]
    outputs = _report_outputs(json_path, md_path, html_path, names)
    inputs = _inputs(train=train, **_eval_sides(evals)) + [(f"the index {p}", p) for p in indexes] + accepting.inputs()
    ci_outs = _ci_outputs(sarif_path, os.environ.get("GITHUB_STEP_SUMMARY") if step_summary else None)
    check_outputs([o for _, outs in outputs for o in outs] + ci_outs, inputs)  # before a long scan, not after it
    jobs = jobs or default_jobs()
    learning = start_learning(train, config, jobs, engine)
    index = _eval_index(evals, loaded, config)
    from .io.readers import open_source

    open_source(train)
    with _progress_bar(progress, quiet) as bar:
        results = scan_index(train, index, config, jobs=jobs, progress=bar, notes=_same_file_notes(train, evals),
                             engine=engine, ray_address=ray_address, learning=learning)
    results, warnings = accepting.apply(results, config, settings.path)
    for w in [] if quiet else warnings:
        click.echo(f"leakcheck: warning: {w}", err=True)
    codes = {name: exit_code(r, config.policy, config.allow_partial) for name, r in results.items()}
    worst = max(codes.values(), key=severity)
    to_stderr = any(stream_of(p) == 1 for _, outs in [*outputs, ("", ci_outs)] for _, p in outs)
    for name, r in results.items():
        _write_reports(r, config.policy, dict(outputs)[name] if n_sets > 1 else outputs[0][1], json_path is not None)
        if not quiet:
            head = f"== eval set {name} ==\n" if n_sets > 1 else ""
            click.echo(head + render(r, codes[name], examples, _report_path(json_path, name, n_sets)), err=to_stderr)
    if not quiet and n_sets > 1:
        bad = [n for n, c in codes.items() if c != 0]
        click.echo(f"{len(results)} eval sets: " + (f"leakage or partial scan in {', '.join(bad)}" if bad else "no leakage in any"), err=to_stderr)
    _write_ci(results, config.policy, ci_outs, annotations == "github", json_path is not None, to_stderr)
    sys.exit(worst)


def _ci_outputs(sarif_path: str | None, step_summary: str | None) -> list[tuple[str, str]]:
    """``(label, path)`` of the CI outputs: the SARIF file, and the step summary named by GITHUB_STEP_SUMMARY (if set)."""
    out = [(f"--sarif {sarif_path}", sarif_path)] if sarif_path is not None else []
    return out + ([(f"GITHUB_STEP_SUMMARY {step_summary}", step_summary)] if step_summary else [])


def _write_ci(results: dict[str, Any], policy: Policy, outs: list[tuple[str, str]], annotate: bool, full: bool, to_stderr: bool) -> None:
    """The SARIF file, the step summary (appended) and the annotation lines."""
    from .report import github

    for label, p in outs:
        if label.startswith("--sarif "):
            from .report.sarif import write_sarif

            write_sarif(results, p, policy)
        else:
            github.append_step_summary(p, github.step_summary(results, policy, json_report=full))
    if annotate:
        click.echo("\n".join(github.annotation_lines(results, policy)), err=to_stderr)


def _load_indexes(indexes: tuple[str, ...], config: ScanConfig) -> list[Any]:
    """The saved eval indexes named by ``--index``, each checked against the config."""
    from .index import EvalIndex

    loaded = [EvalIndex.load(p, config) for p in indexes]
    for p, ix in zip(indexes, loaded):
        ix.check(config, p)
    return loaded


def _eval_index(evals: list[tuple[str, str]], loaded: list[Any], config: ScanConfig) -> Any:
    """One index over the eval files (built now) and the loaded ``--index`` files."""
    from .index import EvalIndex
    from .scan import build_index

    return EvalIndex.concat(([build_index(evals, config)] if evals else []) + loaded)


def _eval_sides(evals: list[tuple[str, str]]) -> dict[str, str]:
    """Labels of the eval inputs for messages: "eval", or "eval set NAME" when there are several."""
    return {"eval": evals[0][1]} if len(evals) == 1 else {f"eval set {n}": p for n, p in evals}


def _report_path(path: str | None, name: str, n_sets: int) -> str | None:
    """With several eval sets each report file gets the set's name: leaks.json -> leaks.gsm8k-test.json."""
    if path is None or n_sets == 1 or stream_of(path) is not None:
        return path
    root, ext = os.path.splitext(path)
    return f"{root}.{name}{ext}"


def _report_outputs(json_path: str | None, md_path: str | None, html_path: str | None, names: list[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Per eval set, the files its reports go to (``(label, path)``, charts included)."""
    n = len(names)
    return [(name, _outputs(("--json", _report_path(json_path, name, n)), ("--markdown", _report_path(md_path, name, n)),
                            ("--html", _report_path(html_path, name, n)))) for name in names]


def _write_reports(result: Any, policy: Policy, outs: list[tuple[str, str]], full: bool) -> None:
    from .report.json import write_json
    from .report.markdown import write_markdown

    for label, p in outs:
        if label.startswith("--json "):
            write_json(result, p, policy)
        elif label.startswith("--markdown "):
            write_markdown(result, p, policy, json_report=full)
        elif label.startswith("--html "):
            from .report.html import write_html

            write_html(result, p, policy, json_report=full)


def _same_file_notes(train: str, evals: list[tuple[str, str]]) -> dict[str, list[str]]:
    out = {}
    for name, p in evals:
        if os.path.realpath(train) == os.path.realpath(p):
            out[name] = ["train and eval are the same file: every record matches itself"]
    return out


@contextlib.contextmanager
def _progress_bar(wanted: bool | None, quiet: bool) -> Iterator[Any]:
    """A tqdm bar over the train side's bytes on standard error: on a terminal, never in CI or with --quiet."""
    show = wanted if wanted is not None else (sys.stderr.isatty() and not os.environ.get("CI"))
    if quiet or not show:
        yield None
        return
    from tqdm import tqdm

    with tqdm(unit="B", unit_scale=True, unit_divisor=1024, desc="train", file=sys.stderr, leave=False) as bar:
        records = [0]

        def update(nbytes: int, nrecords: int = 0, total: int | None = None) -> None:
            if total is not None:
                bar.total = total
                bar.refresh()
                return
            records[0] += nrecords
            bar.update(nbytes)
            bar.set_postfix_str(f"{records[0]:,} records")  # shards are few: every update is shown

        yield update


@main.command("clean")
@click.argument("paths", nargs=-1, required=True, metavar="TRAIN [EVAL]...")
@click.option("-o", "--output", required=True, type=click.Path(), help="The cleaned data: a file for a file input, a new folder for a folder or glob.")
@click.option("--index", "indexes", multiple=True, type=click.Path(dir_okay=False), help="A saved eval index (from leakcheck index); repeatable.")
@click.option("--mode", type=click.Choice(["drop", "flag", "redact"]), default="drop", show_default=True,
              help="drop the leaked records; flag them (a field naming the eval sets); redact: cut contained spans, drop the rest.")
@click.option("--side", type=click.Choice(["train", "eval"]), default="train", show_default=True,
              help="Which side to write: train, or eval (decontaminate the benchmark; one EVAL file).")
@click.option("--remove", help="What is removed, read like --fail-on (levels, kinds, kind:level, all). Default: what the gate fails on.")
@click.option("--fail-on", help="The gate (the default of --remove).")
@click.option("--flag-field", default="leakcheck_leaked", show_default=True, help="The field/column --mode flag adds.")
@click.option("--manifest", "manifest_path", type=click.Path(dir_okay=False), help="Where the manifest goes (default: OUTPUT.manifest.json beside the output).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="The configuration file (default: found as scan finds it).")
@_level_options
@_train_options("unreadable rows were kept unchecked")
@click.option("--progress/--no-progress", default=None, help="Progress bar of the scan on standard error (default: on a terminal, off in CI).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit code speaks.")
def clean_cmd(paths: tuple[str, ...], output: str, indexes: tuple[str, ...], mode: str, side: str, remove: str | None, flag_field: str,
              manifest_path: str | None, config_path: str | None, jobs: int | None, progress: bool | None, quiet: bool,
              **opts: Any) -> None:
    """Write TRAIN without the records that leaked from each EVAL set, and a manifest of them.

    The output has the input's format: JSONL lines not acted on are copied byte for byte
    (a .gz stays .gz), Parquet keeps its schema and row groups, a folder stays a folder with
    the same file names. Exit 0 when written, 2 on an error, 3 when unreadable rows
    (--on-error skip) were kept unchecked.

    \b
    Example:
        leakcheck clean train.jsonl gsm8k_test.jsonl -o train.clean.jsonl
        leakcheck clean train/ --index benchmarks.lcx -o train_clean/ --mode flag
        leakcheck clean train.parquet test.parquet --side eval -o test.clean.parquet
    """
    from .clean import clean
    from .engine import default_jobs

    train, evals = paths[0], _named_evals(paths[1:], opts.pop("names"))
    if not evals and not indexes:
        raise UsageError("clean: name at least one eval set: leakcheck clean TRAIN EVAL -o OUT, or --index FILE.lcx")
    config = build_config(opts, _load_settings(config_path, quiet).settings)
    try:
        policy = Policy.parse(remove) if remove is not None else config.policy
    except UsageError as exc:  # the same syntax as --fail-on, named as the option the user typed
        raise UsageError(str(exc).replace("--fail-on", "--remove")) from None
    manifest = manifest_path or output.rstrip("/" + os.sep) + ".manifest.json"
    inputs = _inputs(train=train, **_eval_sides(evals)) + [(f"the index {p}", p) for p in indexes]
    check_outputs([(f"-o {output}", output), (f"--manifest {manifest}", manifest)], inputs)
    loaded = _load_indexes(indexes, config)
    if side == "eval" and (len(evals) != 1 or loaded):
        raise UsageError("clean --side eval: name exactly one EVAL file (and no --index): its records are the ones written")
    index = _eval_index(evals, loaded, config)
    with _progress_bar(progress, quiet) as bar:
        m = clean(train, index, config, output, mode=mode, side=side, eval_path=evals[0][1] if side == "eval" else None,
                  remove=policy, flag_field=flag_field, jobs=jobs or default_jobs(), progress=bar)
    m.write(manifest)
    if not quiet:
        from .clean import plan_summary

        click.echo(f"{plan_summary(m)}; manifest {manifest}", err=stream_of(manifest) == 1)
    partial = m.skipped and not config.allow_partial
    sys.exit(3 if partial else 0)


@main.command()
@click.argument("evals", nargs=-1, required=True, metavar="EVAL...")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The index file to write (.lcx).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="The configuration file (default: found as scan finds it).")
@_level_options
def index(evals: tuple[str, ...], output: str, config_path: str | None, **opts: Any) -> None:
    """Build a publishable eval index: every level's hashes, no eval text.

    Others scan against it with `leakcheck scan TRAIN --index FILE` without the eval files.
    What an index reveals: see the README ("Publishing an eval index").

    \b
    Example:
        leakcheck index gsm8k_test.jsonl --name gsm8k-test=gsm8k_test.jsonl -o gsm8k.lcx
    """
    from .scan import build_index

    named = _named_evals(evals, opts.pop("names"))
    config = build_config(opts, _load_settings(config_path).settings)
    check_outputs([(f"--output {output}", output)], _inputs(**_eval_sides(named)))
    ix = build_index(named, config)
    ix.save(output)
    sets = ", ".join(f"{s.name} ({len(s):,} records)" for s in ix.sets)
    click.echo(f"wrote {output}: {sets}; levels {', '.join(ix.levels)}; {os.path.getsize(output):,} bytes", err=stream_of(output) == 1)


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="TRAIN EVAL...")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The baseline file to write (JSON).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="The configuration file (default: found as scan finds it).")
@_level_options
@click.option("--train-prompt-field", help="Prompt path for the train side only.")
@click.option("--train-target-field", help="Target path for the train side only.")
@click.option("--max-target-hits", type=int, help="Targets matching more train records than this are generic chance matches (default 10).")
@click.option("-j", "--jobs", type=int, help="Processes probing the train side (default: all cores).")
@click.option("--update", is_flag=True, help="Keep the entries of OUTPUT for eval sets not scanned now (and say what changed).")
def baseline(paths: tuple[str, ...], output: str, config_path: str | None, jobs: int | None, update: bool, **opts: Any) -> None:
    """Record today's findings as accepted: scan --baseline FILE then fails only on new ones.

    Entries name records by content fingerprint, never by row number: reordering,
    resharding or appending to a file changes nothing. The file is sorted JSON without a
    timestamp, so regenerating it with the same findings gives the same bytes. Use the same
    levels and thresholds (and --name) as the scans that read it.

    \b
    Example:
        leakcheck baseline train.jsonl test.jsonl -o leakcheck-baseline.json
        leakcheck scan train.jsonl test.jsonl --baseline leakcheck-baseline.json
    """
    from .baseline import Baseline, load_baseline
    from .engine import default_jobs
    from .scan import build_index, scan_index

    if len(paths) < 2:
        raise UsageError("baseline: name the train data and at least one eval set: leakcheck baseline TRAIN EVAL -o FILE")
    train, evals = paths[0], _named_evals(paths[1:], opts.pop("names"))
    conf = _load_settings(config_path).settings
    config = build_config({**opts, "fail_on": "none"}, {k: v for k, v in conf.items() if k not in ("fail_on", "limits")})
    check_outputs([(f"--output {output}", output)], _inputs(train=train, **_eval_sides(evals)))
    old = load_baseline(output) if os.path.isfile(output) else None
    others = sorted({e.eval_set or "" for e in old.entries} - {n for n, _ in evals}) if old else []
    if others and not update:
        raise UsageError(f"--output {output} holds entries of eval set {', '.join(others)}, not scanned now; "
                         "pass --update to keep them, or name every eval set")
    results = scan_index(train, build_index(evals, config), config, jobs=jobs or _pick(None, conf, "jobs", None) or default_jobs())
    b = Baseline.of(results, config)
    if old is not None:
        b = b.keeping(old, set(results))
    b.write(output)
    per_set = ", ".join(f"{name} {sum(1 for e in b.entries if e.eval_set == name)}" for name in dict.fromkeys([*results, *others]))
    change = "; {} added, {} removed".format(*b.changes(old)) if old is not None else ""
    skipped = sum(sum(r.train.skipped.values()) + sum(r.eval.skipped.values()) for r in results.values())
    if skipped:  # a baseline of a partial scan accepts less, never more: said, not refused
        change += f"; {skipped} rows skipped (--on-error skip): findings in them are not in the baseline"
    click.echo(f"wrote {output}: {len(b.entries)} accepted findings ({per_set}){change}", err=stream_of(output) == 1)


def _outputs(*named: tuple[str, str | None]) -> list[tuple[str, str]]:
    """``(label, path)`` of every file the options will write, the charts beside a Markdown report included."""
    from .report.markdown import chart_paths

    out = []
    for opt, p in named:
        if p is None:
            continue
        out.append((f"{opt} {p}", p))
        if opt == "--markdown":
            out += [(f"the chart {c} of --markdown {p}", c) for c in chart_paths(p).values()]
    return out


def _inputs(**named: str) -> list[tuple[str, str]]:  # noqa: D103
    """``(label, path)`` of every file each input is read from (each file of a folder or glob, of a saved dataset)."""
    from .io.readers import open_source

    out = []
    for side, given in named.items():
        for f in open_source(given).files:
            files = [os.path.join(r, n) for r, _, names in os.walk(f) for n in names] if os.path.isdir(f) else [f]
            out += [(f"the {side} input" if g == given else f"a file of the {side} input {given}", g) for g in files]
    return out


@main.command()
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False), help="Write the Markdown report here (charts as PNG files beside it).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the self-contained HTML report here.")
def report(report_json: str, md_path: str | None, html_path: str | None) -> None:
    """Render a saved JSON report (from scan --json) as Markdown and/or HTML.

    \b
    Example:
        leakcheck report leaks.json --markdown leaks.md --html leaks.html
    """
    from .report.load import load_report

    if md_path is None and html_path is None:
        raise UsageError("report: nothing to write; pass --markdown FILE and/or --html FILE")
    check_outputs(_outputs(("--markdown", md_path), ("--html", html_path)), [("the JSON report it reads", report_json)])
    result, policy = load_report(report_json)
    if md_path is not None:
        from .report.markdown import write_markdown

        write_markdown(result, md_path, policy, json_report=True)
    if html_path is not None:
        from .report.html import write_html

        write_html(result, html_path, policy, json_report=True)


@main.command()
@click.argument("card_path", metavar="CARD", type=click.Path())
@click.option("--report", "report_json", required=True, type=click.Path(dir_okay=False), help="The JSON report (from scan --json).")
@click.option("--report-link", help="Link to the full report put in the card (default: the report's .md beside the JSON, else the JSON, relative to the card).")
@click.option("--data-root", type=click.Path(file_okay=False),
              help="Folder the scan's relative data paths start from, for the file hashes (default: the card's folder, then the current folder).")
@click.option("--pretty-name", help="Dataset name for a card created from the template (default: the card's folder name).")
@click.option("--impact", "impact_json", type=click.Path(dir_okay=False),
              help="Add an 'Impact of decontamination' subsection from this file (leakcheck impact --json).")
def card(card_path: str, report_json: str, report_link: str | None, data_root: str | None, pretty_name: str | None, impact_json: str | None) -> None:
    """Write the "Train/eval overlap" section of a Hugging Face dataset card.

    CARD is a README.md or a folder holding one; a missing card is created from the
    dataset-card template. Running again replaces the section (between its markers) and the
    `leakcheck` key of the YAML header, and leaves the rest of the card untouched.

    \b
    Example:
        leakcheck card my_dataset/ --report leaks.json
    """
    from .report.card import card_file, update_card
    from .report.load import load_report

    target = card_file(card_path)
    check_outputs([(f"the card {target}", target)], [("the JSON report it reads", report_json)]
                  + ([("the impact file it reads", impact_json)] if impact_json else []), probe=False)
    result, policy = load_report(report_json)
    from .report.impact import load_json

    impact = load_json(impact_json) if impact_json else None
    if report_link is None:  # resolved, so the link works inside the dataset repo whatever the current folder
        md = os.path.splitext(report_json)[0] + ".md"
        linked = md if os.path.isfile(md) else report_json
        report_link = os.path.relpath(os.path.realpath(linked), os.path.realpath(os.path.dirname(os.path.abspath(target))))
        report_link = report_link.replace(os.sep, "/")
    written = update_card(target, result, policy, report_link, data_root, pretty_name, impact=impact)
    click.echo(f"wrote the Train/eval overlap section of {written}")


@main.command()
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option("--dataset", "evaluation_dataset", required=True, help="The evaluation dataset, e.g. its Hub id (column 'Evaluation Dataset').")
@click.option("--source", "contaminated_source", required=True, help="The train data it was found in (column 'Contaminated Source').")
@click.option("--subset", default="", help="The evaluation dataset's subset/config (column 'Subset').")
@click.option("--by-subset", is_flag=True, help="One row per eval data_source/subset instead of one row.")
@click.option("--split", type=click.Choice(["train", "dev", "test"]), default="test", show_default=True,
              help="Which split of the evaluation dataset the eval side is.")
@click.option("--model", "is_model", is_flag=True, help="The source is a model, not a corpus.")
@click.option("--reference", default="", help="URL of the evidence, e.g. the published report (column 'Reference').")
@click.option("--pr", default="", help="Number of the pull request to the database, once opened (column 'PR').")
@click.option("--no-header", is_flag=True, help="Print only the row(s), not the column names.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of printing.")
def conda(report_json: str, output: str | None, no_header: bool, is_model: bool, **opts: Any) -> None:
    """Export a JSON report as row(s) of the CONDA data-contamination database.

    \b
    Example:
        leakcheck conda leaks.json --dataset openai/gsm8k --subset main --source my-org/sft-mix --reference https://...
    """
    from .report.conda import to_conda, write_conda
    from .report.load import load_report

    if output is not None:
        check_outputs(_outputs(("-o", output)), [("the JSON report it reads", report_json)])
    result, _ = load_report(report_json)
    text = to_conda(result, header=not no_header, source_type="model" if is_model else "corpus", **opts)
    if output is not None:
        write_conda(text, output)
    else:
        click.echo(text, nl=False)


@main.command("impact")
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option("--scores", "scores_path", required=True, type=click.Path(dir_okay=False),
              help="Per-item scores (JSONL, JSON, CSV or Parquet): one record per eval record, its id and a numeric metric.")
@click.option("--baseline-scores", "baseline_path", type=click.Path(dir_okay=False),
              help="Per-item scores of the baseline model (same ids and metric): the tables then show the gain, --scores minus baseline.")
@click.option("--metric", help="The score field (default: the one numeric field of the scores).")
@click.option("--id-field", help="The id field of the scores (default: the eval's id field, eval_id, id, ...; eval_index keys by 0-based eval index).")
@click.option("--eval", "eval_path", help="Where the scanned eval data is now (default: the eval path in the report).")
@click.option("--allow-missing", is_flag=True, help="Leave out eval records without a score (counted) and ignore scores of no eval record.")
@click.option("--min-n", type=click.IntRange(min=2), default=10, show_default=True, help="Subsets with fewer records get no interval and no p-value.")
@click.option("--resamples", type=click.IntRange(min=1), default=10_000, show_default=True, help="Bootstrap resamples and permutations.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of numpy.random.default_rng for every interval and p-value.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the impact tables as JSON here (for leakcheck card --impact).")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False), help="Write the impact section as Markdown here.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; write the files only.")
def impact_cmd(report_json: str, scores_path: str, baseline_path: str | None, metric: str | None, id_field: str | None, eval_path: str | None,
               allow_missing: bool, min_n: int, resamples: int, seed: int, json_path: str | None, md_path: str | None, quiet: bool) -> None:
    """Score on the whole eval set, on its clean records and on each leaked subset, with bootstrap intervals.

    With --baseline-scores, the gain of the model over the baseline per subset: how much
    of it survives decontamination. Subsets and statistics: see the README ("Impact of
    decontamination").

    \b
    Example:
        leakcheck scan train.parquet eval.parquet --json leaks.json
        leakcheck impact leaks.json --scores tuned.jsonl --baseline-scores base.jsonl --metric bleu --json impact.json
    """
    from .impact import compute, eval_items, read_scores
    from .report import impact as out
    from .report.load import load_report

    given = [("the JSON report it reads", report_json), ("--scores", scores_path)]
    given += [("--baseline-scores", baseline_path)] if baseline_path else []
    check_outputs(_outputs(("--json", json_path), ("--markdown", md_path)), given)
    result, _ = load_report(report_json)
    items = eval_items(result, eval_path)
    check_outputs(_outputs(("--json", json_path), ("--markdown", md_path)), _inputs(eval=items.path), probe=False)
    hint = result.eval.fields.get("id")
    scores = read_scores(scores_path, metric, id_field, hint)
    baseline = read_scores(baseline_path, scores.metric, scores.id_field) if baseline_path else None
    imp = compute(result, report_json, scores, baseline, items, seed=seed, resamples=resamples, min_n=min_n, allow_missing=allow_missing)
    if json_path:
        out.write_json(imp, json_path)
    if md_path:
        out.write_markdown(imp, md_path)
    if not quiet:
        click.echo(out.render(imp), err=any(p and stream_of(p) == 1 for p in (json_path, md_path)))


@main.command()
def examples() -> None:
    """List the bundled example datasets and a command to scan each."""
    base = os.path.join(os.path.dirname(__file__), "data")
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        if not os.path.isdir(d) or name.startswith(("_", ".")):
            continue
        files = sorted(f for f in os.listdir(d) if f.endswith((".parquet", ".jsonl")))
        train = next((f for f in files if f.startswith("train")), None)
        ev = next((f for f in files if f.startswith("eval")), None)
        click.echo(f"{name}: {d}")
        if train and ev:
            click.echo(f"  leakcheck scan {os.path.join(d, train)} {os.path.join(d, ev)}")


if __name__ == "__main__":  # pragma: no cover
    main()
