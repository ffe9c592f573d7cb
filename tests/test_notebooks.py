"""Every notebook the site offers for download runs as a reader would run it.

`make wheel-test` runs this in the clean venv made from the built wheel: each
``_build/html/_sources/<page>.ipynb`` is copied into a temporary folder outside the
checkout and executed there in a fresh kernel of that venv. Every cell must succeed
without writing to stderr and print what the site shows (``text_outputs`` in
buildfiles.py says which outputs a rerun must reproduce).
"""

import importlib.metadata
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import attnbook
from attnbook.exercises import UNFINISHED
from buildfiles import MEASURED, ROOT, ATTENTION, executed_pages, soup, text_outputs
from notebooks import DOWNLOADS, VERSIONS_CELL_ID, cell_text, install_requirement, myst_left, run_as_reader

pytestmark = [pytest.mark.book, pytest.mark.notebooks, pytest.mark.slow]

LABEL = "本次构建实测"  # what every line a measured cell prints says
STARTER = "book/ch04/exercises-starter"
EXERCISES = "book/ch04/exercises"


def test_the_site_offers_every_executed_page_and_nothing_else():
    offered = sorted(p.relative_to(DOWNLOADS).with_suffix("").as_posix() for p in DOWNLOADS.rglob("*.ipynb"))
    assert offered == sorted(executed_pages())


def check_cell(page, i, cell):
    """No stderr; a measured cell labels every line it prints; on the starter page each
    check of a stub says 未完成. Returns whether the cell checked a stub."""
    streams = [o for o in cell.outputs if o.output_type == "stream"]
    assert all(o.name == "stdout" for o in streams), f"{page}: code cell {i} wrote to stderr:\n{cell_text(cell)}"
    if MEASURED in cell.get("metadata", {}).get("tags", []):
        lines = [line for o in streams for line in o.text.splitlines() if line.strip()]
        assert all(LABEL in line for line in lines), (page, i, lines)
    stub_check = page == STARTER and "check(" in cell.source
    if stub_check:
        verdict = cell_text(cell).split("\n", 1)[0]
        assert re.search(f"^练习 [\\d.]+“.+”：{UNFINISHED}$", verdict), (page, i, verdict)
    return stub_check


@pytest.mark.parametrize("page", executed_pages())
def test_downloaded_notebook_runs_in_a_fresh_kernel_outside_the_checkout(page, tmp_path):
    assert not tmp_path.is_relative_to(ROOT)
    saved = Path(shutil.copy(DOWNLOADS / f"{page}.ipynb", tmp_path))  # as the reader saved it
    offered = nbformat.read(saved, as_version=4)
    ran = run_as_reader(offered, tmp_path, sys.executable)  # a cell that raises fails here

    stubs = sum(check_cell(page, i, cell) for i, cell in enumerate(c for c in ran.cells if c.cell_type == "code"))
    assert stubs or page != STARTER, "the starter notebook checks no stubs"
    ours, theirs = text_outputs(ran, only_reproducible=True), text_outputs(offered, only_reproducible=True)
    assert len(ours) == len(theirs)
    for i, (rerun, site) in enumerate(zip(ours, theirs)):
        assert "".join(rerun) == "".join(site), f"{page}: code cell {i} printed other text than the site shows"


# --- markdown that stands alone ------------------------------------------------------------


@pytest.mark.parametrize("page", executed_pages())
def test_downloaded_markdown_carries_no_myst_that_needs_the_repository(page):
    """Jupyter and Colab show a directive fence or a role as raw text, and a
    literalinclude names a file that only the repository has."""
    offered = nbformat.read(DOWNLOADS / f"{page}.ipynb", as_version=4)
    left = [(i, found) for i, cell in enumerate(offered.cells) if cell.cell_type == "markdown"
            for found in myst_left(cell.source)]
    assert not left, f"{page}: {left[:5]}"
    assert not [o for cell in offered.cells for o in cell.get("outputs", [])
                if any(key.startswith("application/papermill.record/") for key in o.get("data", {}))]


def test_notebook_myst_check_can_fail():
    assert [kind for kind, _ in myst_left("(sec-a)=\n:::{editorial}\n见 {ref}`sec-a` 与 [甲](other.md)\n:::")] == \
        ["directive", "role", "target", "relative link"]
    assert myst_left("见 [甲](https://x.org/a.md)、[乙](#b) 与 $\\sqrt{d_k}$。") == []


def test_editorial_blocks_are_labelled_editor_in_the_notebook():
    source = (ROOT / f"{ATTENTION}.md").read_text(encoding="utf-8")
    blocks = len(re.findall(r"^:{3,}\{editorial\}", source, re.M))
    offered = nbformat.read(DOWNLOADS / f"{ATTENTION}.ipynb", as_version=4)
    labelled = sum(len(re.findall(r"^> \*\*编者[^*]*\*\*$", cell.source, re.M))
                   for cell in offered.cells if cell.cell_type == "markdown")
    assert blocks >= 20 and labelled == blocks


@pytest.mark.parametrize("page", executed_pages())
def test_each_figure_is_followed_by_its_caption_with_the_pages_number(page):
    """myst-nb keeps a figure's caption in the cell's metadata, which Jupyter never shows;
    a figure the editor has not drawn yet is captioned the same way, under its note."""
    offered = nbformat.read(DOWNLOADS / f"{page}.ipynb", as_version=4)
    captions = [number for cell in offered.cells if cell.cell_type == "markdown"
                for number in re.findall(r"^\*\*((?:编者)?图 [^*]+)\*\*　", cell.source, re.M)]
    numbers = [span.get_text().strip() for span in soup(page).select("figcaption .caption-number")]
    assert captions == numbers


def buggy_cell():
    from attnbook.exercises import buggy

    offered = nbformat.read(DOWNLOADS / f"{EXERCISES}.ipynb", as_version=4)
    layer = inspect.getsource(buggy.BuggyMultiHeadAttention)
    cells = [cell for cell in offered.cells if cell.cell_type == "code" and layer in cell.source]
    assert len(cells) == 1, "exercise 4.5.6's layer is not one code cell of the exercises notebook"
    return cells[0]


def test_exercise_notebook_holds_the_layer_to_fix_and_it_runs_outside_the_checkout(tmp_path):
    """4.5.6 asks to fix buggy.py's layer: the downloaded notebook has it as a code cell
    that defines the layer in the reader's kernel, outside the repository."""
    probe = nbformat.v4.new_code_cell(
        "layer = BuggyMultiHeadAttention(d_model=8, num_heads=2)\n"
        "out, weights = layer(tf.zeros([1, 3, 8]), return_attention_scores=True)\n"
        "print(tuple(out.shape), tuple(weights.shape))")
    notebook = nbformat.v4.new_notebook(cells=[buggy_cell(), probe])
    ran = run_as_reader(notebook, tmp_path, sys.executable)
    assert cell_text(ran.cells[1]) == "(1, 3, 8) (1, 2, 3, 3)\n"


# --- the versions cell -------------------------------------------------------------------


def versions_cell():
    cells = [nbformat.read(DOWNLOADS / f"{page}.ipynb", as_version=4).cells[0] for page in executed_pages()]
    assert all(cell.get("id") == VERSIONS_CELL_ID for cell in cells)
    assert len({cell.source for cell in cells}) == 1, "every notebook begins with the same cell"
    return cells[0]


def test_versions_cell_names_the_versions_the_book_was_built_with():
    """Run in the wheel venv, this also proves the wheel is the version the book shows."""
    cell, versions = versions_cell(), f"attnbook {attnbook.__version__}、TensorFlow {attnbook.tf.__version__}"
    assert f"本书用 {versions} 构建" in cell.source
    assert cell_text(cell) == f"当前环境：{versions.replace('、', '，')}。\n"


def test_versions_cell_without_attnbook_keeps_the_tensorflow_there(monkeypatch, capsys):
    real = importlib.metadata.version

    def version(name):
        if name == "attnbook":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    exec(versions_cell().source, {})
    printed = capsys.readouterr().out
    assert "attnbook 未安装" in printed
    assert printed.rstrip().endswith(f"%pip install {install_requirement('')}")


def test_versions_cell_runs_cleanly_in_a_python_without_site_packages(tmp_path):
    done = subprocess.run([sys.executable, "-S", "-c", versions_cell().source], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert "attnbook 未安装，TensorFlow 未安装" in done.stdout
    assert done.stdout.rstrip().endswith(f"%pip install {install_requirement('[cpu]')}")
