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


def test_readme_install_line_is_the_configured_repository():
    url = re.search(r"^repository:\n  url: (\S+)$", (ROOT / "_config.yml").read_text(encoding="utf-8"), re.M)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in ("[cpu]", "[gpu]", ""):
        assert f'"attnbook{extra} @ git+{url.group(1)}.git#subdirectory=code"' in readme, extra


# --- pip's view: what an install would add ------------------------------------------------


def dry_run(tmp_path, *requirements):
    """What ``pip install`` would install into an empty environment: {name: version}."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
         "--report", report, *requirements],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    items = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower(): i["metadata"]["version"] for i in items}


@pytest.mark.slow
def test_install_beside_tensorflow_pulls_no_second_tensorflow(tmp_path):
    planned = dry_run(tmp_path, "tensorflow==2.21.0", str(CODE))
    assert planned["attnbook"] == PROJECT["version"]
    assert planned["tensorflow"] == "2.21.0"
    assert "tensorflow-cpu" not in planned, planned


@pytest.mark.slow
def test_cpu_extra_by_direct_reference_pulls_tensorflow_cpu(tmp_path):
    """The README's line, with the local checkout standing in for the git URL."""
    planned = dry_run(tmp_path, f"attnbook[cpu] @ {CODE.as_uri()}")
    assert planned["attnbook"] == PROJECT["version"]
    assert planned["tensorflow-cpu"].startswith("2.21.")
    assert "tensorflow" not in planned, planned


@pytest.mark.book
def test_api_page_shows_the_version():
    page = (ROOT / "_build" / "html" / "book" / "api.html").read_text(encoding="utf-8")
    assert re.search(r'id="attnbook\.__version__".*?' + re.escape(repr(PROJECT["version"])), page, re.S)
