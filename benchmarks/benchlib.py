"""Shared parts of bench_decon.py and bench_scale.py: measuring a process tree, finding out
what the installed leakcheck can do, and small statistics.

Peak memory is the peak of the *sum* of the resident set sizes of a command and all its
descendants, sampled with psutil, because ``--jobs N`` runs N worker processes and
``/usr/bin/time`` (``wait4``'s ``ru_maxrss``) only reports the largest single process.
The largest single process (also sampled) is kept beside it as a cross-check. CPU time
is the larger of ``wait4``'s (the command and every descendant it waited for) and the sum over
every process seen in the tree of its own CPU time when last sampled: ``--jobs`` workers are
the fork server's children, reaped by it, and the fork server is never waited for, so
``wait4`` alone counts the scanning process only.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MiB = 1 << 20


@dataclass
class TreeRun:
    """One measured command: wall and CPU seconds, peak RSS summed over the process tree
    and of its largest single process (MiB), exit code and captured output."""

    wall: float
    cpu: float
    rss_sum_mib: float
    rss_max_mib: float
    rc: int
    stdout: str
    stderr: str

    def last_line(self) -> str:
        lines = self.stderr.strip().splitlines() or self.stdout.strip().splitlines() or ["(no output)"]
        return lines[-1]


def _tree_sample(root: psutil.Process, cpu: dict[tuple[int, float], float]) -> tuple[int, int]:
    """(sum, max) of the RSS in bytes of ``root`` and its live descendants; their own CPU
    seconds so far go into ``cpu`` (keyed by pid and start time: pids are reused)."""
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    sizes = []
    for p in procs:
        try:
            with p.oneshot():
                sizes.append(p.memory_info().rss)
                t = p.cpu_times()
                cpu[(p.pid, p.create_time())] = t.user + t.system
        except psutil.Error:  # ended between listing and reading
            pass
    return sum(sizes), max(sizes, default=0)


def measure_tree(cmd: list[str], interval: float = 0.02, env: dict[str, str] | None = None) -> TreeRun:
    """Run ``cmd`` to the end, sampling its process tree's RSS every ``interval`` seconds.

    The child is reaped with ``os.wait4``, so its rusage is its own and its waited-for
    descendants', never that of some other child reaped meanwhile (``Popen`` reaps
    abandoned children whenever a new one starts); descendants nobody waited for count
    through the sampled CPU times (see the module docstring). Output goes to temporary files,
    not pipes, so a chatty command never blocks on a full pipe while we poll.
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        peak_sum = peak_max = 0
        seen: dict[tuple[int, float], float] = {}
        try:
            root: psutil.Process | None = psutil.Process(proc.pid)
        except psutil.Error:
            root = None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if root is not None:
                s, m = _tree_sample(root, seen)
                peak_sum, peak_max = max(peak_sum, s), max(peak_max, m)
            time.sleep(interval)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    # Not ru_maxrss: Linux keeps it across fork and exec, so a child forked from a big
    # process (a test runner) reports that process's size.
    cpu = max(ru.ru_utime + ru.ru_stime, sum(seen.values()))
    return TreeRun(wall, cpu, peak_sum / MiB, peak_max / MiB, proc.returncode, stdout, stderr)


# --------------------------------------------------------------------------------------
# What the installed leakcheck offers (options land in parallel; detect, never assume)
# --------------------------------------------------------------------------------------


def leakcheck_argv() -> list[str]:
    exe = Path(sys.executable).parent / "leakcheck"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "leakcheck"]


@dataclass(frozen=True)
class Features:
    """What ``leakcheck --help`` and ``leakcheck scan --help`` say is there.

    >>> f = Features.from_help("Commands:\\n  index  Build ...\\n  scan  Scan", "Usage: leakcheck scan [OPTIONS] TRAIN EVAL...\\n  --jobs INTEGER  ...")
    >>> (f.jobs, f.index, f.multi_eval)
    (True, True, 'positional')
    >>> Features.from_help("Commands:\\n  scan  Scan", "Usage: leakcheck scan [OPTIONS] TRAIN EVAL\\n  --json FILE")
    Features(jobs=False, index=False, multi_eval=None)
    """

    jobs: bool
    index: bool
    #: How several eval sets go into one scan: "positional" (``scan TRAIN EVAL...``),
    #: "option" (``--eval FILE`` repeated), or None (one eval set only).
    multi_eval: str | None

    @classmethod
    def from_help(cls, top_help: str, scan_help: str) -> Features:
        usage = next((ln for ln in scan_help.splitlines() if ln.startswith("Usage:")), "")
        if re.search(r"\bEVAL(S)?\]?\.\.\.", usage):
            multi: str | None = "positional"
        elif re.search(r"^\s*--eval\s", scan_help, re.M):
            multi = "option"
        else:
            multi = None
        return cls(
            jobs=bool(re.search(r"^\s*(-j, )?--jobs\b", scan_help, re.M)),
            index=bool(re.search(r"^\s+index\s", top_help, re.M)),
            multi_eval=multi,
        )

    @classmethod
    def detect(cls) -> Features:
        def helptext(*args: str) -> str:
            r = subprocess.run([*leakcheck_argv(), *args, "--help"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"benchmarks: `leakcheck {' '.join(args)} --help` failed (exit {r.returncode}): {r.stderr.strip()}")
            return r.stdout

        return cls.from_help(helptext(), helptext("scan"))

    def describe(self) -> str:
        return (f"--jobs {'yes' if self.jobs else 'no'}, index subcommand {'yes' if self.index else 'no'}, "
                f"several eval sets per scan {self.multi_eval or 'no'}")


def scan_argv(train: Path, evals: list[Path], levels: str, json_out: Path, jobs: int | None, feats: Features) -> list[str]:
    """``leakcheck scan`` argv for one or several eval sets and an optional ``--jobs``."""
    if len(evals) > 1 and feats.multi_eval is None:
        raise ValueError("this leakcheck scans one eval set at a time")
    argv = [*leakcheck_argv(), "scan", str(train)]
    if feats.multi_eval == "option":
        for e in evals:
            argv += ["--eval", str(e)]
    else:
        argv += [str(e) for e in evals]
    argv += ["--levels", levels, "--json", str(json_out), "--quiet"]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    return argv


def flagged_rows(json_path: Path) -> set[int]:
    """0-based rows of the eval items a leakcheck JSON report (one eval set) flagged."""
    rep = json.loads(json_path.read_text())
    return {int(f["eval_index"]) for f in rep["findings"]}


# --------------------------------------------------------------------------------------
# Statistics and machine facts
# --------------------------------------------------------------------------------------


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def least_squares(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """(slope, intercept, R^2) of the least-squares line through the points.

    >>> least_squares([0.2, 1.0, 3.0], [10.0, 42.0, 122.0])
    (40.0, 2.0, 1.0)
    """
    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        raise ValueError("need at least two distinct x values")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (slope * x + intercept)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    return round(slope, 12), round(intercept, 12), round(r2, 12)


def parse_count(text: str) -> int:
    """A record count such as 200k, 1M, 3m or 250000.

    >>> [parse_count(s) for s in ("200k", "1M", "2.5m", "1234")]
    [200000, 1000000, 2500000, 1234]
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise ValueError(f"not a record count: {text!r} (use e.g. 200k, 1M, 250000)")
    mult = {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    return int(round(float(m.group(1)) * mult))


def count_label(n: int) -> str:
    """The short form of a record count.

    >>> [count_label(n) for n in (200_000, 1_000_000, 3_000_000, 1234)]
    ['200k', '1M', '3M', '1234']
    """
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_avg() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"
