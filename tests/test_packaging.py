"""The package as others install it: its metadata and version, its extras beside an
existing TensorFlow (pip's dry-run report), its console script, and its import
without TensorFlow.

`make wheel-test` runs these against the wheel installed in a clean venv.
"""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import attnbook
from notebooks import install_requirement

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "code"
PROJECT = tomllib.loads((CODE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_imports_the_package_under_test():
    """Under `make wheel-test` the installed wheel, never the source tree; else the source tree."""
    where = Path(attnbook.__file__).resolve()
    venv = os.environ.get("ATTNBOOK_WHEEL_VENV")
    if venv:
        assert where.is_relative_to(Path(venv).resolve()) and "site-packages" in where.parts, where
    else:
        assert where.is_relative_to(CODE), where


def test_version_comes_from_the_package_metadata():
    assert attnbook.__version__ == importlib.metadata.version("attnbook") == PROJECT["version"]


def test_tensorflow_is_only_in_the_extras_of_the_book_pins_series():
    assert not any(re.match(r"tensorflow\b", r) for r in PROJECT["dependencies"])
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    series = re.search(r"^tensorflow[-_]cpu==(\d+\.\d+)\.\d+$", requirements, re.M).group(1)
    assert PROJECT["optional-dependencies"] == {"cpu": [f"tensorflow-cpu=={series}.*"],
                                                "gpu": [f"tensorflow[and-cuda]=={series}.*"]}
    assert re.search(r"^-e \./code\[cpu\]$", requirements, re.M)


@pytest.mark.slow
def test_console_script_is_the_exercises_command(capsys):
    from attnbook.exercises.__main__ import main

    done = subprocess.run([Path(sys.executable).parent / "attnbook-check", "--list"],
                          capture_output=True, text=True, timeout=120)
    assert main(["--list"]) == 0 == done.returncode, done.stderr
    assert done.stdout == capsys.readouterr().out and "4.5.2" in done.stdout


# Python with the tensorflow module gone: a meta-path finder that reports it missing.
WITHOUT_TENSORFLOW = """
import importlib.abc, sys
class NoTensorFlow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "tensorflow":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTensorFlow())
import attnbook
"""


def test_import_without_tensorflow_names_the_install_command():
    done = subprocess.run([sys.executable, "-c", WITHOUT_TENSORFLOW], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: attnbook 需要 TensorFlow"), done.stderr
    for extra in ("cpu", "gpu"):
        assert f'pip install "{PROJECT["optional-dependencies"][extra][0]}"' in last
    assert last.count("。") == 1 and last.endswith("。")  # one sentence
    assert "During handling of the above exception" not in done.stderr


def test_readme_install_lines_use_the_configured_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in ("[cpu]", "[gpu]", ""):
        assert install_requirement(extra) in readme, extra


# --- pip's view: what an install would add ------------------------------------------------

DRY_RUNS = {
    "beside tensorflow": ["tensorflow==2.21.0", str(CODE)],
    # The README's line, with the local checkout standing in for the git URL.
    "cpu extra": [f"attnbook[cpu] @ {CODE.as_uri()}"],
}


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """What ``pip install`` would install into an empty environment, {name: version}, for
    each of DRY_RUNS. Both run at once: each spends most of its half minute waiting."""
    folder = tmp_path_factory.mktemp("pip-reports")
    runs = {}
    for i, (name, requirements) in enumerate(DRY_RUNS.items()):
        report = folder / f"{i}.json"
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
                   "--report", report, *requirements]
        runs[name] = report, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {}
    for name, (report, process) in runs.items():
        _, stderr = process.communicate(timeout=900)
        assert process.returncode == 0, f"{name}: {stderr}"
        items = json.loads(report.read_text(encoding="utf-8"))["install"]
        results[name] = {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower(): i["metadata"]["version"]
                         for i in items}
    return results


@pytest.mark.slow
def test_install_beside_tensorflow_pulls_no_second_tensorflow(planned):
    plan = planned["beside tensorflow"]
    assert plan["attnbook"] == PROJECT["version"]
    assert plan["tensorflow"] == "2.21.0"
    assert "tensorflow-cpu" not in plan, plan


@pytest.mark.slow
def test_cpu_extra_by_direct_reference_pulls_tensorflow_cpu(planned):
    plan = planned["cpu extra"]
    assert plan["attnbook"] == PROJECT["version"]
    assert plan["tensorflow-cpu"].startswith("2.21.")
    assert "tensorflow" not in plan, plan


@pytest.mark.book
def test_api_page_shows_the_version():
    page = (ROOT / "_build" / "html" / "book" / "api.html").read_text(encoding="utf-8")
    assert re.search(r'id="attnbook\.__version__".*?' + re.escape(repr(PROJECT["version"])), page, re.S)
