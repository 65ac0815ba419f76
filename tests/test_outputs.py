"""Issue 8 §5: outputs never destroy anything and leakcheck never dies messily.

An output that is an input or another output is refused before the scan; devices, standard
output and symlinks are written where they point, never replaced; write errors and signals
end with one line and no partial or temporary file.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leakcheck.cli import main
from leakcheck.report import _atomic

from .conftest import write_jsonl

ROWS = [{"id": f"e{i}", "question": f"How many apples does farmer number {i} pick on a sunny day in May?",
         "answer": f"Farmer {i} picks {i * 7} apples, seven for each of the {i} rows of trees."} for i in range(1, 13)]


@pytest.fixture
def data(tmp_path: Path, monkeypatch) -> Path:
    """eval.jsonl (12 records) and train.jsonl (8 of them), in the current folder."""
    write_jsonl(tmp_path / "eval.jsonl", ROWS)
    write_jsonl(tmp_path / "train.jsonl", ROWS[:8])
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    res = CliRunner().invoke(main, list(args))
    assert "Traceback" not in res.output
    return res


def scan(*args: str):
    return run("scan", "train.jsonl", "eval.jsonl", "--levels", "exact", *args)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".leakcheck-*"))


# --- an output is never an input, nor another output ----------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--json", "eval.jsonl"], "--json eval.jsonl is the eval input"),
        (["--json", "./eval.jsonl"], "--json ./eval.jsonl is the eval input"),
        (["--markdown", "train.jsonl"], "--markdown train.jsonl is the train input"),
        (["--json", "r.json", "--markdown", "r.json"], None),
    ],
)
def test_output_onto_an_input_or_another_output_is_refused(data, args, message):
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    res = scan(*args)
    assert res.exit_code == 2
    if message:
        assert res.output == f"leakcheck: error: {message}; choose another path: leakcheck never writes over an input\n"
    else:
        assert res.output == "leakcheck: error: --json r.json and --markdown r.json are the same file; give each output its own path\n"
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before  # nothing written, nothing replaced


def test_same_file_by_symlink_hard_link_and_folder_input(data):
    (data / "link.json").symlink_to("eval.jsonl")
    os.link(data / "train.jsonl", data / "hard.json")
    assert scan("--json", "link.json").output == (
        "leakcheck: error: --json link.json is the eval input; choose another path: leakcheck never writes over an input\n")
    assert scan("--html", "hard.json").output == (
        "leakcheck: error: --html hard.json is the train input; choose another path: leakcheck never writes over an input\n")
    assert (data / "link.json").is_symlink() and (data / "eval.jsonl").read_text().count("\n") == 12
    shards = data / "shards"
    shards.mkdir()
    write_jsonl(shards / "a.jsonl", ROWS[:4])
    write_jsonl(shards / "b.jsonl", ROWS[4:8])
    res = run("scan", "shards", "eval.jsonl", "--json", "shards/b.jsonl")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: --json shards/b.jsonl is a file of the train input shards; "
        "choose another path: leakcheck never writes over an input\n")
    assert (shards / "b.jsonl").read_text().count("\n") == 4


def test_file_of_a_saved_hugging_face_dataset_is_an_input(data):
    import datasets

    datasets.Dataset.from_list(ROWS[:8]).save_to_disk(str(data / "hf"))
    state = (data / "hf" / "state.json").read_bytes()
    res = run("scan", "hf", "eval.jsonl", "--levels", "exact", "--json", "hf/state.json")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: --json hf/state.json is a file of the train input hf; "
        "choose another path: leakcheck never writes over an input\n")
    assert (data / "hf" / "state.json").read_bytes() == state


def test_markdown_charts_are_outputs_too(data):
    res = scan("--json", "r-by_kind.png", "--markdown", "r.md")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: --json r-by_kind.png and the chart r-by_kind.png of --markdown r.md are the same file; "
        "give each output its own path\n")
    res = scan("--markdown", "r.md", "--html", "./r-scores.png")  # a chart that may not be drawn is removed if stale
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: the chart r-scores.png of --markdown r.md and --html ./r-scores.png are the same file; "
        "give each output its own path\n")
    assert not (data / "r.md").exists()


def test_report_and_conda_never_write_over_the_json_they_read(data):
    assert scan("--json", "r.json").exit_code == 1
    before = (data / "r.json").read_bytes()
    (data / "alias.json").symlink_to("r.json")
    res = run("report", "r.json", "--html", "alias.json")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: --html alias.json is the JSON report it reads; choose another path: leakcheck never writes over an input\n")
    res = run("report", "r.json", "--markdown", "out.md", "--html", "out-by_kind.png")
    assert res.exit_code == 2 and "are the same file" in res.output
    res = run("conda", "r.json", "--dataset", "d", "--source", "s", "-o", "./r.json")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: -o ./r.json is the JSON report it reads; choose another path: leakcheck never writes over an input\n")
    assert (data / "r.json").read_bytes() == before and (data / "alias.json").is_symlink()


# --- devices, standard output, symlinks ------------------------------------------------------------


def test_dash_and_dev_stdout_are_standard_output_and_the_summary_moves_to_stderr(data):
    res = scan("--json", "-")
    assert res.exit_code == 1
    report = json.loads(res.stdout)  # standard output holds the JSON report alone
    assert [f["eval_id"] for f in report["findings"]][:2] == ["e1", "e2"] and len(report["findings"]) == 8
    assert res.stderr.endswith("LEAKAGE FOUND\n") and "  and 3 more findings in the JSON report on standard output\n" in res.stderr
    assert not list(data.glob("-*"))  # no file named "-"
    res = scan("--markdown", "/dev/stdout")
    assert res.stdout.startswith("# Train/eval contamination report\n") and "![" not in res.stdout  # no charts beside a stream
    assert not list(data.glob("*.png")) and not list(data.glob("stdout*"))
    res = scan("--json", "-", "--html", "/dev/stdout")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: --json - and --html /dev/stdout are the same file; give each output its own path\n")


def test_standard_output_closed_by_the_reader_is_one_line(data):
    """``leakcheck scan ... --json - | head -c0``: the pipe is closed before leakcheck writes."""
    proc = subprocess.Popen([sys.executable, "-m", "leakcheck", "scan", "train.jsonl", "eval.jsonl", "--levels", "exact",
                             "--json", "-"], cwd=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    assert (proc.wait(timeout=120), err) == (2, b"leakcheck: error: standard output (-): cannot write: broken pipe; write it elsewhere\n")


def test_a_device_is_written_never_replaced(data):
    null = os.stat(os.devnull)
    res = scan("--json", os.devnull, "--markdown", "r.md")
    assert res.exit_code == 1, res.output
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (null.st_ino, null.st_rdev)
    assert "in the JSON report /dev/null" in res.output


def test_a_symlink_is_written_through_and_stays_a_symlink(data):
    real = data / "store"
    real.mkdir()
    (data / "latest.json").symlink_to("store/r.json")  # dangling until the first write
    (data / "latest.md").symlink_to("store/report.md")
    assert scan("--json", "latest.json", "--markdown", "latest.md").exit_code == 1
    assert (data / "latest.json").is_symlink() and (data / "latest.md").is_symlink()
    assert len(json.loads((real / "r.json").read_text())["findings"]) == 8
    # the charts sit beside the file the Markdown is in, named after it, so its image links work
    assert sorted(p.name for p in real.iterdir()) == ["r.json", "report-by_kind.png", "report.md"]
    assert "![Contaminated share of eval, by kind and level](report-by_kind.png)" in (real / "report.md").read_text()
    (data / "loop.json").symlink_to("loop.json")
    res = scan("--json", "loop.json")
    assert res.exit_code == 2 and res.output == "leakcheck: error: loop.json: cannot write: a symlink loop; write it elsewhere\n"
    assert (data / "loop.json").is_symlink()


# --- write errors: one line naming the output, no partial file ---------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_disk_full_device(data):
    res = scan("--json", "/dev/full")
    assert res.exit_code == 2
    assert res.output == "leakcheck: error: /dev/full: cannot write: no space left on device; free some space or write it elsewhere\n"


@pytest.mark.parametrize(
    "err, message",
    [
        (errno.ENOSPC, "no space left on device; free some space or write it elsewhere"),
        (errno.EROFS, "the file system is read-only; write it elsewhere"),
        (errno.EACCES, "permission denied; make the folder writable or write it elsewhere"),
    ],
)
def test_write_error_keeps_the_old_report_and_leaves_no_temp_file(data, monkeypatch, err, message):
    """Simulated: we run as root, which chmod does not stop, and cannot fill a real disk in a test.

    The error comes from ``fsync``, after the temporary file was created and written, which is
    where a full disk shows on file systems that allocate late.
    """
    (data / "out").mkdir()
    old = data / "out" / "r.md"
    old.write_text("the report of yesterday\n")

    def fail(fd):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(_atomic.os, "fsync", fail)
    res = scan("--markdown", "out/r.md")
    assert res.exit_code == 2
    assert res.output == f"leakcheck: error: out/r-by_kind.png: cannot write: {message}\n"
    assert old.read_text() == "the report of yesterday\n" and sorted(p.name for p in (data / "out").iterdir()) == ["r.md"]


def test_read_only_folder_is_refused_before_the_scan(data, monkeypatch):
    """Simulated as above: creating any file in ``ro/`` fails with EROFS, as on a read-only mount."""
    (data / "ro").mkdir()
    real = _atomic.tempfile.mkstemp
    scanned = []

    def mkstemp(*a, dir=None, **k):
        if dir and Path(dir).name == "ro":
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*a, dir=dir, **k)

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(sys.modules["leakcheck.scan"], "scan", lambda *a, **k: scanned.append(a))
    res = scan("--json", "r.json", "--html", "ro/r.html")
    assert res.exit_code == 2
    assert res.output == "leakcheck: error: ro/r.html: cannot write: the file system is read-only; write it elsewhere\n"
    assert scanned == [] and not (data / "r.json").exists() and leftovers(data) == []


def _sysfs_refuses_root() -> bool:
    try:
        Path("/sys/leakcheck-probe.json").touch()
    except PermissionError:
        return True
    except OSError:
        return False
    os.unlink("/sys/leakcheck-probe.json")
    return False


@pytest.mark.skipif(not _sysfs_refuses_root(), reason="needs a /sys where even root may not create files")
def test_a_folder_the_kernel_refuses_even_to_root(data):
    res = scan("--json", "/sys/r.json")
    assert res.exit_code == 2
    assert res.output == "leakcheck: error: /sys/r.json: cannot write: permission denied; make the folder writable or write it elsewhere\n"


# --- signals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_mid_scan_ends_with_one_line_and_no_file(tmp_path, sig):
    """The eval input is a FIFO: the scan blocks reading it, so the signal lands mid-scan, with no timing."""
    write_jsonl(tmp_path / "train.jsonl", ROWS)
    fifo = tmp_path / "eval.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "out").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "leakcheck", "scan", "train.jsonl", "eval.jsonl", "--json", "out/r.json",
                             "--markdown", "out/r.md"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "w") as w:  # returns once leakcheck has opened the FIFO to read it
        w.write("".join(json.dumps(r) + "\n" for r in ROWS[:3]))
        w.flush()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err) == (128 + sig, b"", f"leakcheck: interrupted by {signal.Signals(sig).name}\n".encode())
    assert list((tmp_path / "out").iterdir()) == [] and leftovers(tmp_path) == []


def test_signal_during_a_write_waits_until_the_file_is_whole(data, monkeypatch):
    real = os.replace

    def replace(src, dst):  # SIGTERM arrives between writing the temporary file and renaming it
        os.kill(os.getpid(), signal.SIGTERM)
        real(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", replace)
    res = scan("--json", "r.json", "--html", "r.html")
    assert res.exit_code == 143 and res.output == "leakcheck: interrupted by SIGTERM\n"
    assert len(json.loads((data / "r.json").read_text())["findings"]) == 8  # whole; the HTML was never started
    assert not (data / "r.html").exists() and leftovers(data) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the CLI gives the handlers back


def test_interrupt_inside_a_write_removes_the_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old\n")

    def replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(_atomic.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        _atomic.write_atomic(target, "new\n")
    assert target.read_text() == "old\n" and leftovers(tmp_path) == []


def test_a_private_report_stays_private(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old\n")
    target.chmod(0o600)
    _atomic.write_atomic(target, "new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o600


# --- the terminal names the JSON report only when one was written ------------------------------------


def test_terminal_says_where_the_other_findings_are(data):
    res = scan("--examples", "2")
    assert "  and 6 more findings (--json FILE lists them all)\n" in res.output
    res = scan("--examples", "2", "--json", "r.json")
    assert "  and 6 more findings in the JSON report r.json\n" in res.output
    res = scan("--examples", "8", "--json", "r.json")
    assert "more finding" not in res.output


def test_markdown_without_json_does_not_send_the_reader_to_it(tmp_path, monkeypatch):
    from leakcheck.report.markdown import MAX_ROWS

    many = [{"id": f"q{i}", "question": f"What is {i} plus {i} when counted on the fingers of a farmer?",
             "answer": f"It is {2 * i}, because {i} and {i} together make {2 * i}."} for i in range(MAX_ROWS + 5)]
    write_jsonl(tmp_path / "eval.jsonl", many)
    write_jsonl(tmp_path / "train.jsonl", many)
    monkeypatch.chdir(tmp_path)
    assert scan("--markdown", "alone.md").exit_code == 1
    assert (f"5 more findings are not listed here (this table lists the first {MAX_ROWS}); the JSON report (scan --json) "
            "lists them all.") in (tmp_path / "alone.md").read_text()
    assert scan("--markdown", "both.md", "--json", "both.json").exit_code == 1
    assert f"5 more findings are in the JSON report (this table lists the first {MAX_ROWS})." in (tmp_path / "both.md").read_text()
    assert run("report", "both.json", "--markdown", "again.md").exit_code == 0  # rendered from the JSON report
    assert f"5 more findings are in the JSON report (this table lists the first {MAX_ROWS})." in (tmp_path / "again.md").read_text()
