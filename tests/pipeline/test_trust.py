"""What an operator does to a checkpointed run, through ``dotr run`` (docs/cli.md, "What dotr
trusts and guarantees"): two runs on one checkpoint, a deleted or edited output, an edited rule
file or ontology, a rotated input, state files that are damaged, crafted, foreign or old, a
rejects file that must survive a kill, files that are wrong before anything loads, signals in
the start-up, a closed standard output, a full disk, planted symbolic links. Each ends in one
``dotr:`` line and a documented exit code, never in a traceback, and loses nothing."""

import json
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dotr.pipeline import state_file
from dotr.pipeline.checkpoint import differences
from dotr.pipeline.cli import main

ROOT = Path(__file__).parents[2]
COOLING = ROOT / "examples" / "cooling"
DATA = Path(__file__).parent / "data"
DOTR = [sys.executable, "-m", "dotr", "run", "-q"]


def _stream(path: Path, n: int, seed: int = 1, bad_every: int = 0) -> Path:
    rnd = random.Random(seed)
    lines = []
    for t in range(n):
        lines.append(json.dumps({"t": t, "facts": [f"temp({rnd.choice([1, 50, 120, 160])})"]}))
        if bad_every and t % bad_every == bad_every - 1:
            lines.append('{"t": "not a time"}')
    path.write_text("\n".join(lines) + "\n")
    return path


def _args(tmp: Path, stream: Path, *extra: str, output: str = "o.jsonl", checkpoint: bool = True) -> list[str]:
    """``dotr run``'s arguments on the files of ``tmp``, with its checkpoint ``tmp/ck``."""
    return ["--rules", str(tmp / "rules.dotr"), "--ontology", str(tmp / "ontology.ttl"), "--input", str(stream),
            "--output", str(tmp / output), *(["--checkpoint", str(tmp / "ck")] if checkpoint else []), *extra]


def _setup(tmp: Path, n: int = 400, **kw) -> Path:
    """The cooling example's files in ``tmp`` (so that a test may edit them), and a stream."""
    for name in ("rules.dotr", "ontology.ttl"):
        shutil.copy(COOLING / name, tmp / name)
    return _stream(tmp / "s.jsonl", n, **kw)


def _dotr(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*DOTR, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


def _one_line_error(proc: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("dotr: "), proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def _interrupted_checkpoint(tmp: Path, stream: Path, *extra: str) -> None:
    """A checkpoint of a run stopped part way (SIGINT after its first output), not finished."""
    proc = subprocess.Popen([*DOTR, *_args(tmp, stream, "--commit-every", "50", *extra)], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    out = tmp / "o.jsonl"
    while proc.poll() is None and not (out.exists() and out.stat().st_size > 2000):
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130, proc.stderr.read()


# ------------------------------------------------------------------------ the checkpoint's owner
def test_a_second_run_on_a_checkpoint_in_use_is_refused_naming_the_holder(tmp_path):
    stream = _setup(tmp_path, 20_000)
    whole = _dotr(*_args(tmp_path, stream, output="whole.jsonl", checkpoint=False))
    assert whole.returncode == 0
    first = subprocess.Popen([*DOTR, *_args(tmp_path, stream)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        while not (tmp_path / "ck" / "lock").exists() or not (tmp_path / "ck" / "lock").read_text():
            time.sleep(0.01)
        second = _dotr(*_args(tmp_path, stream))
        _one_line_error(second, 2, "is in use by another dotr run", f"process {first.pid}")
    finally:
        assert first.wait(timeout=120) == 0, first.stderr.read()
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


# ------------------------------------------------------------------------ the committed output
@pytest.mark.parametrize("damage, words", [
    (lambda out: out.unlink(), "is gone"),
    (lambda out: out.write_bytes(out.read_bytes()[:100]), "is shorter"),
    (lambda out: out.write_bytes(b"X" + out.read_bytes()[1:]), "does not hold what this checkpoint committed"),
])
def test_an_output_deleted_shortened_or_edited_is_refused_not_padded(tmp_path, damage, words):
    stream = _setup(tmp_path, 3000)
    _interrupted_checkpoint(tmp_path, stream)
    damage(tmp_path / "o.jsonl")
    before = (tmp_path / "o.jsonl").read_bytes() if (tmp_path / "o.jsonl").exists() else None
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, words)
    after = (tmp_path / "o.jsonl").read_bytes() if (tmp_path / "o.jsonl").exists() else None
    assert after == before and (after is None or b"\0" not in after)


def test_a_finished_run_whose_output_was_deleted_says_so(tmp_path):
    stream = _setup(tmp_path, 50)
    assert _dotr(*_args(tmp_path, stream)).returncode == 0
    (tmp_path / "o.jsonl").unlink()
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "is gone")


# ------------------------------------------------------------------------ the program and the input
@pytest.mark.parametrize("change, words", [
    (lambda tmp: (tmp / "rules.dotr").write_text((tmp / "rules.dotr").read_text().replace(">= 150", ">= 140")),
     "the rule file"),
    (lambda tmp: (tmp / "rules.dotr").write_text("p(X) :- q(X) .\n"), "the rule file"),
    (lambda tmp: (tmp / "ontology.ttl").write_text((tmp / "ontology.ttl").read_text() + "\n# edited\n"),
     "the ontology file 1"),
])
def test_a_changed_program_is_refused_saying_what_changed(tmp_path, change, words):
    stream = _setup(tmp_path, 3000)
    _interrupted_checkpoint(tmp_path, stream)
    output = (tmp_path / "o.jsonl").read_bytes()
    change(tmp_path)
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "belongs to another program", words, "start over")
    assert (tmp_path / "o.jsonl").read_bytes() == output


def test_a_changed_option_is_refused_naming_it(tmp_path):
    stream = _setup(tmp_path, 3000)
    _interrupted_checkpoint(tmp_path, stream)
    _one_line_error(_dotr(*_args(tmp_path, stream, "--changes")), 2, "--changes (was off, now on)")


def test_a_rotated_input_is_refused_not_read_past_its_first_lines(tmp_path):
    stream = _setup(tmp_path, 3000)
    _interrupted_checkpoint(tmp_path, stream)
    stream.rename(tmp_path / "s.jsonl.1")
    _stream(stream, 3000, seed=2)  # a new file of the same name
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "is not the input this checkpoint read")
    stream.write_text(stream.read_text()[:50])
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "has fewer lines")


def test_an_input_that_grew_after_the_committed_lines_is_read_on(tmp_path):
    stream = _setup(tmp_path, 3000)
    whole = _dotr(*_args(tmp_path, stream, output="whole.jsonl", checkpoint=False))
    lines = stream.read_text().splitlines(keepends=True)
    stream.write_text("".join(lines[:2000]))
    _interrupted_checkpoint(tmp_path, stream)
    stream.write_text("".join(lines))  # (appended to, as a log grows)
    assert whole.returncode == 0 and _dotr(*_args(tmp_path, stream)).returncode == 0
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_a_continued_run_sums_up_the_whole_input(tmp_path):
    """The summary of a run continued from its checkpoint counts the conclusions of the whole
    input, as it counts its records (the conclusions were those after the restart only)."""
    stream = _setup(tmp_path, 3000)
    assert _dotr(*_args(tmp_path, stream, "--stats", str(tmp_path / "whole.json"), output="whole.jsonl",
                        checkpoint=False)).returncode == 0
    _interrupted_checkpoint(tmp_path, stream)
    assert _dotr(*_args(tmp_path, stream, "--stats", str(tmp_path / "continued.json"))).returncode == 0
    whole, continued = (json.loads((tmp_path / name).read_text()) for name in ("whole.json", "continued.json"))
    assert continued["conclusions"] == whole["conclusions"] and continued["conclusions"]["facts"]
    assert (continued["records"], continued["time_points"]) == (whole["records"], whole["time_points"])


# ------------------------------------------------------------------------ state files
class _Exploit:
    """A pickle that runs code when loaded: it creates the file ``path``."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_pickle_never_runs_as_a_checkpoint_or_a_snapshot(tmp_path):
    stream = _setup(tmp_path, 50)
    marker = tmp_path / "pwned"
    crafted = pickle.dumps(_Exploit(marker))
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "state.pickle").write_bytes(crafted)  # dotr's old checkpoint file
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "older dotr")
    (tmp_path / "ck" / "state.dotr").write_bytes(crafted)
    _one_line_error(_dotr(*_args(tmp_path, stream)), 2, "not a dotr state file", "pickle")
    (tmp_path / "s.state").write_bytes(crafted)
    resume = _dotr("--rules", str(tmp_path / "rules.dotr"), "--input", str(stream), "--resume",
                   str(tmp_path / "s.state"))
    _one_line_error(resume, 2, "not a dotr state file")
    assert not marker.exists()


def test_a_damaged_truncated_or_crafted_state_file_is_a_clear_error_never_a_traceback(tmp_path):
    stream = _setup(tmp_path, 3000)
    _interrupted_checkpoint(tmp_path, stream)
    state, output = tmp_path / "ck" / "state.dotr", tmp_path / "o.jsonl"
    good, committed = state.read_bytes(), output.read_bytes()
    header, data = state_file.decode(good, "checkpoint")
    rnd = random.Random(7)
    blobs = []
    for _ in range(16):  # bit flips anywhere (the header, the body)
        blob = bytearray(good)
        blob[rnd.randrange(len(blob))] ^= 1 << rnd.randrange(8)
        blobs.append(bytes(blob))
    header_end = good.index(b"\n", len(state_file.MAGIC)) + 1
    blobs += [good[:n] for n in (0, 5, len(state_file.MAGIC), header_end - 3, header_end + 10, len(good) - 1)]
    # crafted: well-formed files with valid checksums whose content is not a run's state
    program, run = header["program"], dict(data["run"])
    for crafted in ({"run": {**run, "lines": "many"}, "reasoner": data["reasoner"]},
                    {"run": run, "reasoner": {"terms": [1, 2, 3]}},
                    {"run": run, "reasoner": {**data["reasoner"], "lars": {"facts": [(1,)]}}},
                    [1, 2, 3], {"run": {**run, "counts": {}}, "reasoner": None}):
        blobs.append(state_file.encode("checkpoint", crafted, {"program": program}))
    blobs.append(state_file.encode("snapshot", data, {"program": program}))  # another kind
    blobs.append(good.replace(b'"format": 1', b'"format": 9'))  # a newer format
    for blob in blobs:
        state.write_bytes(blob)
        output.write_bytes(committed)
        proc = _dotr(*_args(tmp_path, stream))
        try:  # (a flip in a part of the header that says nothing of the state: the run goes on)
            head, body = state_file.decode(blob, "checkpoint")
            same = body == data and isinstance(head.get("program"), dict) and not differences(head["program"], program)
        except (state_file.StateFileError, TypeError, AttributeError, KeyError):
            same = False
        if same:
            assert proc.returncode == 0, proc.stderr
            continue
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.startswith("dotr: "), \
            (blob[:80], proc.stderr)
        assert output.read_bytes() == committed
    state.write_bytes(good)  # the undamaged file continues the run
    output.write_bytes(committed)
    assert _dotr(*_args(tmp_path, stream)).returncode == 0


def test_a_checkpoint_of_state_format_1_is_read_and_continued(tmp_path):
    """The checkpoint in tests/pipeline/data/checkpoint-v1 was written by the first dotr with
    state files (its README says how): this dotr, and every later one, continues it."""
    fixture = DATA / "checkpoint-v1"
    for name in ("rules.dotr", "ontology.ttl", "o.jsonl", "expected.jsonl"):
        shutil.copy(fixture / name, tmp_path / name)
    shutil.copytree(fixture / "ck", tmp_path / "ck")
    stream = tmp_path / "s.jsonl"
    shutil.copy(fixture / "s.jsonl", stream)
    proc = _dotr(*_args(tmp_path, stream, "--on-error", "skip"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o.jsonl").read_text() == (tmp_path / "expected.jsonl").read_text()


# ------------------------------------------------------------------------ rejects
def test_rejects_are_committed_with_the_state_and_survive_kills(tmp_path):
    stream = _setup(tmp_path, 12_000, bad_every=97)
    assert _dotr(*_args(tmp_path, stream, "--on-error", "skip", checkpoint=False)).returncode == 0
    whole, whole_rejects = (tmp_path / "o.jsonl").read_bytes(), (tmp_path / "o.jsonl.rejects.jsonl").read_bytes()
    assert whole_rejects.count(b"\n") == 12_000 // 97
    (tmp_path / "o.jsonl").unlink()
    (tmp_path / "o.jsonl.rejects.jsonl").unlink()
    args, kills, rnd = [*DOTR, *_args(tmp_path, stream, "--on-error", "skip", "--commit-every", "40")], 0, \
        random.Random(3)
    for _ in range(12):
        proc = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=rnd.uniform(0.5, 1.5))
            break
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            kills += 1
    finish = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert finish.returncode == 0, finish.stderr
    assert kills and (tmp_path / "o.jsonl").read_bytes() == whole
    assert (tmp_path / "o.jsonl.rejects.jsonl").read_bytes() == whole_rejects


def test_an_unwritable_rejects_file_is_found_before_the_run(tmp_path):
    stream = _setup(tmp_path, 50, bad_every=10)
    (tmp_path / "rejects").mkdir()
    proc = _dotr(*_args(tmp_path, stream, "--on-error", "skip", "--rejects", str(tmp_path / "rejects")))
    _one_line_error(proc, 2, "--rejects", "a directory")
    assert not (tmp_path / "ck").exists()


# ------------------------------------------------------------------------ the process boundary
def _fire(*extra: str, **kw) -> subprocess.CompletedProcess:
    ex = ROOT / "examples" / "fire"
    return _dotr("--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"), *extra, **kw)


def test_files_are_checked_before_anything_loads(tmp_path):
    stream = ROOT / "examples" / "fire" / "stream.jsonl"
    cases = [(["--input", str(tmp_path / "missing.jsonl")], "no such file"),
             (["--input", str(tmp_path)], "a directory"),
             (["--input", str(stream), "--output", str(tmp_path / "no" / "o.jsonl")], "does not exist"),
             (["--input", str(stream), "--stats", str(tmp_path / "no" / "s.json")], "does not exist"),
             (["--input", str(stream), "--output", str(tmp_path / "o"), "--checkpoint", str(stream)],
              "a file, not a directory")]
    for extra, words in cases:
        _one_line_error(_fire(*extra), 2, words)


def test_the_input_as_the_output_is_refused_and_left_whole(tmp_path):
    stream = tmp_path / "s.jsonl"
    shutil.copy(ROOT / "examples" / "fire" / "stream.jsonl", stream)
    before = stream.read_bytes()
    _one_line_error(_fire("--input", str(stream), "--output", str(stream)), 2, "is the input")
    assert stream.read_bytes() == before


def _catching(proc: subprocess.Popen) -> None:
    """Wait until ``proc`` catches SIGTERM (Linux's /proc: its SigCgt mask), whatever the load:
    dotr's handlers are in place (Python's own SIGINT handler is there from the interpreter's
    start, before any of dotr's code can run)."""
    signum = signal.SIGTERM
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = Path(f"/proc/{proc.pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught >> (signum - 1) & 1:
            return
        time.sleep(0.005)
    raise AssertionError("the command never caught the signal")


@pytest.mark.parametrize("after", [0.0, 0.5])  # (while the command's modules are imported; into the background)
def test_sigint_and_sigterm_during_the_start_up_end_without_a_traceback(tmp_path, after):
    big = tmp_path / "big.nt"  # a background that takes a while to load
    big.write_text("".join(f"<http://ex.org/s{i}> <http://ex.org/p> <http://ex.org/o{i % 97}> .\n"
                           for i in range(300_000)))
    (tmp_path / "r.dotr").write_text("@prefix : <http://ex.org/> .\nq(X) :- :p(X, Y), a(Y) .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 1, "facts": ["a(b)"]}\n')
    for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        proc = subprocess.Popen([*DOTR, "--rules", str(tmp_path / "r.dotr"), "--ontology", str(big), "--input",
                                 str(stream)], cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        _catching(proc)
        time.sleep(after)
        proc.send_signal(signum)
        assert proc.wait(timeout=60) == code
        err = proc.stderr.read()
        assert "Traceback" not in err and "dotr: interrupted" in err, err


def test_a_closed_standard_output_ends_the_run_quietly(tmp_path):
    stream = _stream(tmp_path / "s.jsonl", 20_000)
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--input", str(stream)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # as `dotr run | head -1` does
    assert proc.wait(timeout=60) == 141
    assert proc.stderr.read() == b""


def test_a_full_disk_is_one_line_with_its_exit_code(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    stream = _stream(tmp_path / "s.jsonl", 2000)
    proc = _dotr("--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--output", "/dev/full")
    _one_line_error(proc, 74, "no space left on device")


def test_derived_files_are_not_written_through_a_planted_link(tmp_path):
    stream = _stream(tmp_path / "s.jsonl", 50, bad_every=10)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "o.jsonl.rejects.jsonl").symlink_to(victim)
    proc = _dotr("--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--output",
                 str(tmp_path / "o.jsonl"), "--on-error", "skip")
    _one_line_error(proc, 2, "symbolic link")
    (tmp_path / "link.jsonl").symlink_to(victim)
    _one_line_error(_dotr("--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--output",
                          str(tmp_path / "link.jsonl")), 2, "symbolic link")
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("fmt", ["nquads", "trig"])
def test_rdf_outputs_are_the_same_bytes_in_every_process(tmp_path, fmt):
    ex = ROOT / "examples" / "trex"
    outputs = set()
    for seed in ("1", "2", "3"):
        proc = _dotr("--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"), "--input",
                     str(ex / "stream.jsonl"), "--format", fmt, env={**os.environ, "PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        outputs.add(proc.stdout)
    assert len(outputs) == 1 and "urn:dotr:t:" in outputs.pop()


def test_a_checkpointed_run_in_rdf_formats_recovers_byte_for_byte(tmp_path):
    stream = _setup(tmp_path, 3000)
    (tmp_path / "rules.dotr").write_text("@prefix : <http://example.org/plant#> .\n"
                                         ":hot(:plant, V) :- [3] <> temp(V), V >= 150 .\n")
    whole = _dotr(*_args(tmp_path, stream, "--format", "nquads", output="whole.nq", checkpoint=False))
    assert whole.returncode == 0, whole.stderr
    _interrupted_checkpoint(tmp_path, stream, "--format", "nquads")
    assert _dotr(*_args(tmp_path, stream, "--format", "nquads")).returncode == 0
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.nq").read_bytes()


def test_main_in_process_reports_a_missing_input_as_one_line(tmp_path, capsys):
    code = main(["run", "--rules", str(COOLING / "rules.dotr"), "--input", str(tmp_path / "nope.jsonl")])
    assert code == 2 and capsys.readouterr().err.startswith("dotr: --input")
