"""The package survives outside this repository: a wheel built from the tree carries every
subpackage, the grammar, the profiles, the examples, LICENSE and py.typed, and installed into a
virtualenv of its own it runs the README's example command and each stage embedded, from a
temporary directory that holds no source (tests/packaging/smoke.py).

The virtualenv has no site-packages of the system: the dependencies are this interpreter's, made
visible by a ``.pth`` file that lists its site-packages folders (no ``.pth`` file of theirs is
run, so an editable install of dotr there is not seen), and the wheel is installed without them
(``--no-deps``: no network)."""

from __future__ import annotations

import email
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from dotr import compiled

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # the tree without what earlier builds left in it (build/ would be packed too)
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "*.so",
                                                                 "*.c", ".hypothesis", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
                   check=True, capture_output=True)
    (built,) = out.glob("dotr-*.whl")
    return built


def test_the_wheel_carries_what_an_installed_dotr_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("dotr/__init__.py", "dotr/py.typed", "dotr/rules/lang/grammar.lark", "dotr/ontology/profiles/rdfs.dotr",
                   "dotr/examples/fire/rules.dotr", "dotr/examples/fire/stream.jsonl", "dotr/pipeline/spark/job.py",
                   "dotr/examples/workloads/dotr_paper.py"):
        assert needed in names, needed
    assert any(n.startswith("dotr/rules/engine/") and n.endswith(".so") for n in names)  # compiled
    for module in compiled.MODULES:  # (the time point's path: compiled, beside its source)
        path = module.replace(".", "/")
        assert f"{path}.py" in names and any(n.startswith(f"{path}.") and n.endswith(".so") for n in names), module
    assert not any(n.endswith((".pyx", ".pxd")) for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = email.message_from_bytes(zipfile.ZipFile(wheel).read(metadata))
    assert meta["License-Expression"] == "Apache-2.0"
    assert "Typing :: Typed" in meta.get_all("Classifier")
    requires = meta.get_all("Requires-Dist")
    assert not any(r.startswith(("pyspark", "pyarrow", "pandas")) and "extra ==" not in r for r in requires)
    assert any(r.startswith("pyspark") and 'extra == "spark"' in r for r in requires)
    assert "docs/" not in meta.get_payload() or "source distribution" in meta.get_payload()


def test_the_installed_wheel_runs_outside_the_repository(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()}
    (Path(purelib) / "dependencies.pth").write_text("\n".join(sorted(p for p in ours if Path(p).is_dir())) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "tests" / "packaging" / "smoke.py", work)
    proc = subprocess.run([str(python), "smoke.py", str(ROOT)], cwd=work, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert str(venv) in proc.stdout, proc.stdout  # dotr came from the wheel
