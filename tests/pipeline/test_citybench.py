"""CityBench's query shapes through ``dotr run`` (dotr.examples.workloads.citybench): each query as
the benchmark writes it (type patterns apart from the groups that use their variables, comments,
FROM the repository) answers exactly as its reshaped form, on generated streams shaped like
Aarhus's; on CityBench's own sample too when DOTR_CITYBENCH_DATA names its folder."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from dotr.examples.workloads.citybench import (generated_repository, generated_rows, queries, real_properties,
                                               real_rows, write_stream)
from dotr.pipeline.cli import main

RESHAPED = [name for name, spec in queries().items() if spec["reshaped"] is not None]
DATA = os.environ.get("DOTR_CITYBENCH_DATA")


def _answers(tmp_path: Path, name: str, repository: Path, properties: dict, rows_of) -> dict[str, str]:
    spec = queries()[name]
    write_stream(tmp_path / "s.jsonl", spec["streams"], properties, 20, rows_of)
    out = {}
    for form in ("written", "reshaped"):
        rules = tmp_path / f"{form}.dotr"
        rules.write_text(f"@timeunit ms .\nquery {name} := {spec[form].replace('<repository>', f'<{repository}>')} .\n")
        assert main(["run", "-q", "--rules", str(rules), "--input", str(tmp_path / "s.jsonl"),
                     "--output", str(tmp_path / f"{form}.jsonl")]) == 0
        out[form] = (tmp_path / f"{form}.jsonl").read_text()
    return out


@pytest.mark.parametrize("name", RESHAPED)
def test_a_citybench_query_as_written_answers_as_its_reshaped_form(name, tmp_path):
    rng = random.Random(1)
    properties = generated_repository(tmp_path / "repository.nt", 449, rng)
    out = _answers(tmp_path, name, tmp_path / "repository.nt", properties,
                   lambda service: generated_rows(service, 20, rng))
    assert out["written"] == out["reshaped"] and '"answers"' in out["written"]


@pytest.mark.skipif(not DATA, reason="DOTR_CITYBENCH_DATA names no folder with CityBench's sample")
@pytest.mark.parametrize("name", RESHAPED)
def test_on_citybench_sample(name, tmp_path):
    data = Path(DATA)
    repository = data / "SensorRepository.n3"
    out = _answers(tmp_path, name, repository, real_properties(repository), lambda s: real_rows(s, 20, data))
    assert out["written"] == out["reshaped"]
