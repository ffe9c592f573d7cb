"""The notebooks the site offers for download: where they are, the install line they
print, and how to run one as a reader would (buildfiles.py says what a rerun must
reproduce).

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

from buildfiles import HTML, ROOT

DOWNLOADS = HTML / "_sources"
VERSIONS_CELL_ID = "attnbook-versions"  # the first cell, added by book/_ext/writing/notebook_download.py


def install_requirement(extra):
    """The requirement that installs attnbook straight from the repository of _config.yml."""
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    url = re.search(r"^repository:\n  url: (\S+)$", config, re.M).group(1)
    return f'"attnbook{extra} @ git+{url}.git#subdirectory=code"'


# MyST that Jupyter and Colab show as raw text, or that names a file of the repository.
MYST = {
    "directive": re.compile(r"^ {0,3}(`{3,}|:{3,}|~{3,})\s*\{[^}]*\}.*$", re.M),
    "role": re.compile(r"\{[A-Za-z][\w:.+-]*\}`[^`]*`"),
    "target": re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M),
    "relative link": re.compile(r"\]\((?![A-Za-z][\w+.-]*:|#)[^)]*\)"),
    "repository path": re.compile(r"\.\./code/|code/attnbook/"),
}


def myst_left(markdown):
    """(kind, text) of every piece of MyST in a markdown cell's source that needs the repository."""
    return [(kind, match.group(0)) for kind, pattern in MYST.items() for match in pattern.finditer(markdown)]


def cell_text(cell):
    """A code cell's stream and text/plain outputs, joined."""
    return "".join(o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def reader_kernel(folder, python):
    """A kernel manager for ``python``'s own ipykernel, whatever kernels the user has
    registered: its kernelspec lives in ``folder``.

    The kernel talks over unix sockets in ``folder``, not TCP: a TCP kernel binds ports
    its manager picked and released a moment before, and when tests start kernels in
    parallel another process can take one first, so the kernel dies before it answers."""
    spec = Path(folder) / "reader"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "reader", "language": "python"}))
    return KernelManager(kernel_name="reader", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder)]),
                         transport="ipc", ip=str(Path(folder) / "kernel"))


def run_as_reader(nb, workdir, python, timeout=600):
    """Execute a copy of ``nb`` in a fresh kernel of ``python``, in the working directory
    ``workdir``; return it. A cell that raises raises ``CellExecutionError``."""
    nb = copy.deepcopy(nb)
    with tempfile.TemporaryDirectory() as kernels:
        client = NotebookClient(nb, km=reader_kernel(kernels, python), timeout=timeout,
                                resources={"metadata": {"path": str(workdir)}})
        client.execute()
    return nb
