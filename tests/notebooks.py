"""The site's downloadable notebooks: which pages they are, the install line they print,
how to run one as a reader would, and which of their outputs a rerun must reproduce.

Shared by the tests that read the built book; not a test module itself.
"""

import copy
import json
import re
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
DOWNLOADS = ROOT / "_build" / "html" / "_sources"

# Cells tagged so print timings measured on the building machine, and say so.
MEASURED = "measured-at-build"
MEASURED_LABEL = "本次构建实测"

# Cells tagged so check a reader's answer on freshly drawn random inputs: the verdict
# line is the same on every run, the details (largest error, where) are not.
RANDOM = "random-inputs"


def install_requirement(extra):
    """The requirement that installs attnbook straight from the repository of _config.yml."""
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    url = re.search(r"^repository:\n  url: (\S+)$", config, re.M).group(1)
    return f'"attnbook{extra} @ git+{url}.git#subdirectory=code"'


def executed_pages():
    """Pages with jupytext front matter: the ones the build executes and offers as .ipynb."""
    pages = []
    for md in sorted((ROOT / "book").rglob("*.md")):
        if "drafts" in md.parts:
            continue
        head = md.read_text(encoding="utf-8").split("\n---", 1)[0]
        if head.startswith("---") and "kernelspec:" in head:
            pages.append(md.relative_to(ROOT).with_suffix("").as_posix())
    return pages


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def cell_text(cell):
    """A code cell's stream and text/plain outputs, joined."""
    return "".join(o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def text_outputs(nb, only_reproducible=False):
    """Every stream and text/plain output of a notebook, one string per code cell.

    With ``only_reproducible``, cells measured at build time are left out and cells on
    random inputs keep only their first line: what a rerun must reproduce exactly.
    """
    outputs = []
    for cell in nb.cells:
        if cell.cell_type != "code" or (only_reproducible and MEASURED in tags(cell)):
            continue
        text = cell_text(cell)
        outputs.append(text.split("\n", 1)[0] if only_reproducible and RANDOM in tags(cell) else text)
    return outputs


def reader_kernel(folder, python):
    """A kernel manager for ``python``'s own ipykernel, whatever kernels the user has
    registered: its kernelspec lives in ``folder``."""
    spec = Path(folder) / "reader"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "reader", "language": "python"}))
    return KernelManager(kernel_name="reader", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder)]))


def run_as_reader(nb, workdir, python, timeout=600):
    """Execute a copy of ``nb`` in a fresh kernel of ``python``, in the working directory
    ``workdir``; return it. A cell that raises raises ``CellExecutionError``."""
    nb = copy.deepcopy(nb)
    with tempfile.TemporaryDirectory() as kernels:
        client = NotebookClient(nb, km=reader_kernel(kernels, python), timeout=timeout,
                                resources={"metadata": {"path": str(workdir)}})
        client.execute()
    return nb
