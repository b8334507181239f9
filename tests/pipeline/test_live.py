"""``dotr run`` as a live process: output per time point through a pipe, ``--follow``, SIGINT, a
run killed with -9 at random moments and run again with ``--checkpoint`` (its output byte for
byte an uninterrupted run's), and time gaps that cost nothing."""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.runs import finish_after_kills

ROOT = Path(__file__).parents[2]
COOLING = ROOT / "examples" / "cooling"
DOTR = [sys.executable, "-m", "dotr", "run", "-q"]


def _cooling_stream(path: Path, n: int, seed: int = 1) -> Path:
    rnd = random.Random(seed)
    path.write_text("".join(json.dumps({"t": t, "facts": [f"temp({rnd.choice([1, 50, 120, 160])})"]}) + "\n"
                            for t in range(n)))
    return path


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--ontology", str(COOLING / "ontology.ttl"),
                           *args], cwd=ROOT, capture_output=True, text=True, **kw)


def test_each_time_point_arrives_while_the_producer_is_still_writing():
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr")], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        seen = []
        for t in range(4):  # a slow producer: one record, then wait for the previous time point's line
            proc.stdin.write(json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n")
            proc.stdin.flush()
            if t > 0:
                seen.append(json.loads(proc.stdout.readline())["t"])  # blocks until dotr writes it
        assert seen == [0, 1, 2]  # t = 3 is complete only when a later record or the end arrives
        proc.stdin.close()
        assert json.loads(proc.stdout.readline())["t"] == 3
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_follow_reads_a_growing_file_until_interrupted(tmp_path):
    stream, out = tmp_path / "s.jsonl", tmp_path / "o.jsonl"
    stream.write_text(json.dumps({"t": 0, "facts": ["temp(160)"]}) + "\n")
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--follow",
                             "--output", str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        with open(stream, "a") as f:
            f.write(json.dumps({"t": 1, "facts": ["temp(160)"]}))  # half a line: not read yet
            f.flush()
            time.sleep(0.5)
            f.write("\n" + json.dumps({"t": 2, "facts": ["temp(160)"]}) + "\n")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(out.read_text().splitlines() if out.exists() else []) < 2:
            time.sleep(0.1)
        assert [json.loads(line)["t"] for line in out.read_text().splitlines()] == [0, 1]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()


def test_sigint_commits_and_the_same_command_finishes_the_job(tmp_path):
    stream = _cooling_stream(tmp_path / "s.jsonl", 4000)
    whole = _run("--input", str(stream), "--output", str(tmp_path / "whole.jsonl"))
    assert whole.returncode == 0
    args = ["--input", str(stream), "--output", str(tmp_path / "o.jsonl"), "--checkpoint", str(tmp_path / "ck")]
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--ontology", str(COOLING / "ontology.ttl"),
                             *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / "o.jsonl").exists() or not (tmp_path / "o.jsonl").stat().st_size:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    code, err = proc.wait(timeout=60), proc.stderr.read()
    assert code in (0, 130) and "Traceback" not in err  # (0: it had finished)
    again = _run(*args)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    # a finished job run again is a no-op that keeps its output
    assert _run(*args).returncode == 0 and "has finished" in _run(*args).stderr
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


@pytest.mark.parametrize("seed", [random.randrange(10**6)])  # other moments in every run
def test_killed_with_minus_9_at_random_moments_the_same_command_gives_the_same_output(tmp_path, seed):
    rnd = random.Random(seed)
    stream = _cooling_stream(tmp_path / "s.jsonl", 12000, seed)  # (a whole run: about 2.5 s)
    assert _run("--input", str(stream), "--output", str(tmp_path / "whole.jsonl")).returncode == 0
    args = [*DOTR, "--rules", str(COOLING / "rules.dotr"), "--ontology", str(COOLING / "ontology.ttl"),
            "--input", str(stream), "--output", str(tmp_path / "o.jsonl"), "--checkpoint", str(tmp_path / "ck"),
            "--commit-every", "40"]
    finish_after_kills(args, rnd, tmp_path / "o.jsonl", tmp_path / "ck", seed)
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes(), seed


def test_a_gap_of_a_billion_ticks_costs_what_a_gap_of_one_does(tmp_path):
    rules = tmp_path / "r.dotr"  # the cooling program without freeze (which holds at every empty tick)
    rules.write_text("\n".join(line for line in (COOLING / "rules.dotr").read_text().splitlines()
                               if not line.startswith("freeze")))

    def timed(gap: int) -> float:
        stream = tmp_path / f"gap{gap}.jsonl"
        stream.write_text("".join(json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n" for t in (0, 1, 2, 2 + gap)))
        started = time.perf_counter()
        done = subprocess.run([*DOTR, "--rules", str(rules), "--ontology", str(COOLING / "ontology.ttl"), "--input",
                               str(stream), "--output", str(tmp_path / "o.jsonl"), "--max-gap", "0"], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return time.perf_counter() - started, (tmp_path / "o.jsonl").read_text()
    small, out_small = timed(1)
    large, out_large = timed(10**9)
    assert large < small + 2.0
    # after the gap the windows hold the last reading alone: no alarm (a box over 3 ticks)
    last = json.loads(out_large.splitlines()[-1])
    assert last["t"] == 2 + 10**9 and "veryHot(1000000002)" in last["facts"] and "alarm" not in last["facts"]
    assert "alarm" in json.loads(out_small.splitlines()[-1])["facts"]


def test_a_gap_the_program_fills_at_every_tick_is_said_once(tmp_path):
    stream = tmp_path / "s.jsonl"  # freeze holds at every tick of an empty stretch: each is printed
    stream.write_text("".join(json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n" for t in (0, 20_010)))
    done = _run("--input", str(stream), "--output", str(tmp_path / "o.jsonl"), timeout=300)
    assert done.returncode == 0
    assert done.stderr.count("facts hold at every tick") == 1 and "freeze" in done.stderr
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 20_011


@pytest.mark.parametrize("missing", ["--input", "--output"])
def test_a_checkpoint_needs_an_input_file_and_an_output_file(tmp_path, capsys, missing):
    from dotr.pipeline.cli import main

    stream = _cooling_stream(tmp_path / "s.jsonl", 3)
    files = {"--input": str(stream), "--output": str(tmp_path / "o.jsonl")}
    del files[missing]
    args = [arg for pair in files.items() for arg in pair]
    assert main(["run", "-q", "--rules", str(COOLING / "rules.dotr"), *args, "--checkpoint", str(tmp_path / "ck")]) == 2
    assert "it needs both files" in capsys.readouterr().err


def test_a_gap_an_at_window_fills_at_every_millisecond_is_said_once(tmp_path):
    (tmp_path / "r.dotr").write_text("@timeunit ms .\nr(X, T) :- [20] @T watched(X) .\nwatched(s1) .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "facts": []}) + "\n" for t in (0, 20_010)))
    done = subprocess.run([sys.executable, "-m", "dotr", "run", "--rules", str(tmp_path / "r.dotr"), "--input",
                           str(stream), "--output", str(tmp_path / "o.jsonl")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("the output changes at every millisecond") == 1
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 20_011


def _gap_stream(path: Path, gap: int, bad: bool = False) -> Path:
    """Two readings, then one ``gap`` ticks later (freeze holds at every tick between: each is
    evaluated), a bad record read before the gap is filled (``bad``), and a last reading."""
    lines = [json.dumps({"t": t, "facts": ["temp(160)"]}) for t in (0, 1, 1 + gap)]
    lines += ['{"t": "soon"}'] if bad else []
    lines += [json.dumps({"t": 2 + gap, "facts": ["temp(1)"]})]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_far_future_record_is_a_bad_record(tmp_path):
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n" for t in (0, 1, 10**15, 2)))
    done = _run("--input", str(stream), "--output", str(tmp_path / "o.jsonl"), timeout=60)
    assert done.returncode == 3 and "line 3: time 1000000000000000 is" in done.stderr
    assert "--max-gap 1,000,000" in done.stderr
    done = _run("--input", str(stream), "--output", str(tmp_path / "o.jsonl"), "--on-error", "skip", timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["t"] for line in (tmp_path / "o.jsonl").read_text().splitlines()] == [0, 1, 2]
    rejects = [json.loads(line) for line in (tmp_path / "o.jsonl.rejects.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rejects] == [3]
    assert _run("--input", str(stream), "--output", str(tmp_path / "o.jsonl"), "--max-gap", "5",
                timeout=60).returncode == 3
    assert _run("--input", str(stream), "--max-gap", "-1").returncode == 2


def test_the_bound_on_a_gap_in_milliseconds_is_ten_thousand_times_longer(tmp_path):
    (tmp_path / "r.dotr").write_text("@timeunit ms .\nhot :- [1 s] <> temp(V), V > 100 .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n" for t in (0, 10**9, 2 * 10**10)))
    done = subprocess.run([*DOTR, "--rules", str(tmp_path / "r.dotr"), "--input", str(stream), "--on-error", "skip",
                           "--output", str(tmp_path / "o.jsonl")], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    times = [json.loads(line)["t"] for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert 10**9 in times and max(times) < 2 * 10**10
    assert "--max-gap 10,000,000,000" in (tmp_path / "o.jsonl.rejects.jsonl").read_text()


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_inside_a_long_gap_stops_the_run_within_a_second(tmp_path, signum, code):
    stream, out = _gap_stream(tmp_path / "s.jsonl", 900_000), tmp_path / "o.jsonl"  # (the gap: about 90 s)
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--output",
                             str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        while not out.exists() or out.stat().st_size < 100_000:  # (inside the gap)
            time.sleep(0.05)
        proc.send_signal(signum)
        sent = time.monotonic()
        assert proc.wait(timeout=30) == code
        assert time.monotonic() - sent < 2.0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_a_run_stopped_inside_a_gap_continues_from_a_commit_made_in_it(tmp_path):
    stream = _gap_stream(tmp_path / "s.jsonl", 30_000, bad=True)  # (about 3 s)
    whole = _run("--input", str(stream), "--output", str(tmp_path / "whole.jsonl"), "--on-error", "skip",
                 "--rejects", str(tmp_path / "whole.rejects"), timeout=120)
    assert whole.returncode == 0, whole.stderr
    out, checkpoint = tmp_path / "o.jsonl", tmp_path / "ck"
    args = ["--input", str(stream), "--output", str(out), "--on-error", "skip", "--rejects", str(tmp_path / "rejects"),
            "--checkpoint", str(checkpoint), "--commit-every", "1000"]
    command = [*DOTR, "--rules", str(COOLING / "rules.dotr"), "--ontology", str(COOLING / "ontology.ttl"), *args]
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        while not out.exists() or len(out.read_bytes().splitlines()) < 5000:
            time.sleep(0.05)
        proc.kill()  # (-9: what stands is what was committed inside the gap)
        proc.wait()
    finally:
        proc.kill()
    from dotr.pipeline import state_file
    from dotr.pipeline.checkpoint import KIND

    _, saved = state_file.read(checkpoint / "state.dotr", KIND)
    assert saved["run"]["counts"]["time points"] >= 3000 and saved["run"]["lines"] == 2  # (before the gap's record)
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)  # stopped again, by SIGTERM
    try:
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) in (0, 143)
    finally:
        proc.kill()
    again = _run(*args, timeout=120)
    assert again.returncode == 0, again.stderr
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert (tmp_path / "rejects").read_bytes() == (tmp_path / "whole.rejects").read_bytes()


def _reading(t: int) -> str:
    return json.dumps({"t": t, "facts": ["temp(160)"]}) + "\n"


@pytest.mark.parametrize("how", ["truncated", "rotated"])
def test_follow_reads_a_truncated_or_rotated_file_from_its_start(tmp_path, how):
    stream, out = tmp_path / "s.jsonl", tmp_path / "o.jsonl"
    stream.write_text("".join(_reading(t) for t in range(10)))
    proc = subprocess.Popen([*DOTR, "--rules", str(COOLING / "rules.dotr"), "--input", str(stream), "--follow",
                             "--output", str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True)

    def times(n: int) -> list[int]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(out.read_text().splitlines() if out.exists() else []) < n:
            time.sleep(0.05)
        return [json.loads(line)["t"] for line in out.read_text().splitlines()]

    try:
        assert times(9) == list(range(9))  # (9 waits for a later record)
        if how == "rotated":
            stream.rename(tmp_path / "s.jsonl.1")
        time.sleep(0.5)  # (the follower sees the end of the old content)
        stream.write_text("".join(_reading(t) for t in (10, 11, 12)))  # shorter than what was read
        assert times(12) == list(range(12))
        with open(stream, "a") as f:
            f.write(_reading(13))
        assert times(13) == list(range(13))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        err = proc.stderr.read()
        assert err.count(f"was {'cut' if how == 'truncated' else 'replaced'}") == 1 and "Traceback" not in err, err
    finally:
        proc.kill()
        proc.wait()
