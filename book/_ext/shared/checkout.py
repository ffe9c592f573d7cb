"""What this checkout is: its commit, the companion package's version, a digest of files,
and where the repository's site is published.

The citation of a page (``writing/cite_section``), the ledger's links to a test's lines
(``resolving/claims``) and the PDF's colophon (tools/pdfbook/colophon.py) name the same
commit and edition; the execution cache (``reading/execution``) and the ledger's test
results (``resolving/claims``) are keyed by the same digest of files; the citation and the
downloaded notebooks (``writing/notebook_download``) link to the same site. None of it
imports Sphinx.
"""

import hashlib
import importlib.metadata
import sys
import re
import subprocess
import tomllib
from pathlib import Path

UNKNOWN = "未知"  # a fact this checkout cannot tell (no git, no version)

# Left out of every digest: caches and build outputs, wherever they are.
SKIP_PARTS = {"__pycache__", "build", "dist", ".pytest_cache"}


def files_digest(root, inputs, salt=""):
    """A short hash of ``salt`` and every file under ``inputs`` (paths relative to ``root``,
    or absolute ones inside it; folders walked recursively, caches and build folders and
    ``*.egg-info`` left out), each file with its path relative to ``root``."""
    root = Path(root)
    digest = hashlib.sha256(salt.encode())
    for path in _input_files(root, inputs):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _input_files(root, inputs):
    for name in inputs:
        path = root / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            parts = set(file.relative_to(root).parts)
            if not parts & SKIP_PARTS and not any(p.endswith(".egg-info") for p in parts):
                yield file


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commit_facts(root):
    """(short commit, date YYYY-MM-DD) of the checkout: 12 hex digits, marked ``-dirty``
    when a tracked file has changes; :data:`UNKNOWN` for both outside git."""
    try:
        sha, date = _git(root, "log", "-1", "--format=%H %cs").split()
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError, ValueError):
        return UNKNOWN, UNKNOWN
    return sha[:12] + ("-dirty" if dirty else ""), date


def package_version(*names):
    """The installed version of the first of ``names`` that is installed, else :data:`UNKNOWN`."""
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return UNKNOWN


def edition(root):
    """The companion package's version in this checkout (code/pyproject.toml), else the
    installed one's. Reading the file names the code the pages ran, where the environment
    has another checkout installed, and spares an import of TensorFlow."""
    pyproject = Path(root) / "code" / "pyproject.toml"
    if pyproject.is_file():
        version = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("version")
        if version:
            return version
    return package_version("attnbook")


def site_url(repository_url):
    """The GitHub Pages address of https://github.com/OWNER/REPO (a trailing ``/`` or ``.git``
    allowed): https://owner.github.io/REPO/; '' for an address that is not GitHub's."""
    m = re.match(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$", repository_url or "")
    return f"https://{m.group(1).lower()}.github.io/{m.group(2)}/" if m else ""


def dependency_key(root, inputs=("code", "requirements.txt", "book/data")):
    """A short hash of everything the pages' code depends on besides their own cells.

    Covers every file under the ``inputs`` (folders walked recursively, caches and
    build folders left out), the Python version and ipykernel's version.
    """
    import ipykernel  # only where the key is computed: the helpers above need no kernel

    return files_digest(root, inputs, salt=f"{sys.version}|ipykernel {ipykernel.__version__}")
