"""Execute the book's pages once per change, in parallel, and never serve stale output.

myst-nb's ``cache`` mode keys each executed page on its code cells alone, so an edit to
the package in ``code/`` would leave every page's output as it was (the known hole in
jupyter-cache). This extension closes it and speeds the build up:

* **A key for what the pages run.** At ``config-inited`` it hashes every file of
  ``code/``, ``requirements.txt``, ``book/data/`` (the results files the cost page reads),
  the Python version and the kernel (ipykernel's version), and points ``nb_execution_cache_path`` at a cache folder named after that
  hash. Changing any of them changes a Sphinx ``env`` setting, so Sphinx rereads every
  page, finds nothing in the new folder and executes every page again; a page whose own
  code cells change misses the cache in the same folder and runs alone. Prose edits run
  nothing. Old folders beyond the newest few are deleted.
* **A version for what renders the pages.** Sphinx does not notice an edit to an
  extension. This extension's ``env_version`` is a hash of every file of ``book/_ext``,
  so after such an edit Sphinx finds the saved environment's version out of date,
  starts a new environment and reads and writes every page again. The pages' code does
  not run again: the cache key above does not cover the extensions.
* **Parallel execution.** Before Sphinx reads the pages (``env-before-read-docs``), the
  pages that miss the cache run here, as many at a time as the machine has cores, and
  their outputs go into the cache; myst-nb then reads every page from it. A page whose
  front matter says ``execution: {alone: true}`` times code on this machine, so it runs
  alone, after the others, with nothing else competing for the cores.
* **Kernels over IPC.** The kernels talk to the build over Unix sockets in a private
  temporary folder, not over TCP: no port is open to other users of the machine, and
  ipykernel has no reason to log its warning about unencrypted TCP into the build log.

A cell error stops the build with the page, the cell and the error, as
``nb_execution_raise_on_error`` would. After myst-nb reads a page from the cache, this
also writes the executed notebook (``_build/jupyter_execute/<page>.ipynb``, the one the
site offers for download) with the cached outputs: myst-nb 1.4 writes the notebook it
read, without them, in ``cache`` mode.
"""

import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_client.manager import AsyncKernelManager
from myst_nb.core.read import create_nb_reader
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from sphinx.errors import ExtensionError
from sphinx.util import logging

from book._ext.shared.checkout import dependency_key, files_digest

logger = logging.getLogger(__name__)

KEEP_CACHES = 3  # cache folders kept, newest first


def extensions_key(root, inputs=("book/_ext",)):
    """A short hash of every file of the book's extensions, in every subfolder, scripts
    included: what turns a page into HTML."""
    return files_digest(root, inputs)


def _set_cache_path(app, config):
    base = Path(app.outdir).parent / ".jupyter_cache"
    key = dependency_key(app.confdir)
    config.nb_execution_cache_path = str(base / key)
    _prune(base, keep=key)


def _prune(base, keep):
    """Delete all but the newest ``KEEP_CACHES`` cache folders (never ``keep``)."""
    if not base.is_dir():
        return
    folders = sorted((p for p in base.iterdir() if p.is_dir() and p.name != keep),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[KEEP_CACHES - 1:]:
        shutil.rmtree(old, ignore_errors=True)


# --- reading a page as myst-nb does ----------------------------------------------------


def read_notebook(env, docname):
    """The page as the notebook myst-nb will look up in the cache, or None (no code)."""
    path = env.doc2path(docname)
    text = Path(path).read_text(encoding="utf-8")
    reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
    return None if reader is None else reader.read(text)


def runs_alone(notebook):
    """Whether the page times code, and so must not share the machine while it runs."""
    return bool(notebook.metadata.get("execution", {}).get("alone", False))


# --- executing the pages that miss the cache ------------------------------------------


def _execute_missing(app, env, docnames):
    nb_config = env.mystnb_config
    if nb_config.execution_mode != "cache":
        return
    cache = get_cache(nb_config.execution_cache_path)
    pending = []
    for docname in docnames:
        notebook = read_notebook(env, docname)
        if notebook is None:
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            pending.append((docname, notebook))
    if not pending:
        return
    workers = max(1, min(os.cpu_count() or 1, len(pending)))
    names = ", ".join(doc for doc, _ in pending)
    logger.info(f"[execution] {len(pending)} page(s) to run, up to {workers} at a time: {names}")
    failures = asyncio.run(_run_all(env, cache, pending, workers, nb_config.execution_timeout))
    if failures:
        raise ExtensionError("executing pages failed:\n\n" + "\n\n".join(failures))


async def _run_all(env, cache, pending, workers, timeout):
    """Run the pages ``workers`` at a time, then the pages that time code one by one."""
    shared = [item for item in pending if not runs_alone(item[1])]
    alone = [item for item in pending if runs_alone(item[1])]
    failures = []
    with tempfile.TemporaryDirectory(prefix="book-kernels-") as sockets:
        slots = asyncio.Semaphore(workers)

        async def run(index, docname, notebook):
            async with slots:
                error = await _run_one(env, cache, docname, notebook, timeout,
                                       Path(sockets) / f"k{index}")
            if error:
                failures.append(error)

        await asyncio.gather(*(run(i, *item) for i, item in enumerate(shared)))
        for i, item in enumerate(alone, start=len(shared)):
            await run(i, *item)
    return failures


async def _run_one(env, cache, docname, notebook, timeout, socket_prefix):
    """Execute one page and cache it; return an error report, or '' on success."""
    path = Path(env.doc2path(docname))
    kernel = notebook.metadata.get("kernelspec", {}).get("name", "python3")
    manager = AsyncKernelManager(kernel_name=kernel, transport="ipc",
                                 connection_file=f"{socket_prefix}.json", ip=f"{socket_prefix}-ipc")
    # record_timing=False: timing metadata in the cells would change the cache key.
    client = NotebookClient(notebook, km=manager, timeout=timeout, allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        await client.async_execute()
    except CellExecutionError as error:
        return f"{docname}: {error}"
    except Exception as error:  # noqa: BLE001 - a kernel that dies or times out
        return f"{docname}: {type(error).__name__}: {error}"
    finally:  # the client does not stop a kernel it was handed
        if await manager.is_alive():
            await manager.shutdown_kernel()
    seconds = time.perf_counter() - start
    cache.cache_notebook_bundle(CacheBundleIn(notebook, str(path), data={"execution_seconds": seconds}),
                                check_validity=False, overwrite=True)
    logger.info(f"[execution] {docname}: executed in {seconds:.1f} s")
    return ""


# --- the executed notebook, with its outputs -------------------------------------------


def _write_executed(app, doctree):
    env = app.env
    if env.mystnb_config.execution_mode != "cache":
        return
    notebook = read_notebook(env, env.docname)
    if notebook is None:
        return
    cache = get_cache(env.mystnb_config.execution_cache_path)
    _, executed = cache.merge_match_into_notebook(notebook)  # a miss would have failed the read
    for cell in executed.cells:
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    target = Path(env.mystnb_config.output_folder, f"{env.docname}.ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(executed, target)


def merge_streams(outputs):
    """Consecutive stream outputs of the same name as one output, as the page shows them."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def setup(app):
    app.connect("config-inited", _set_cache_path)
    app.connect("env-before-read-docs", _execute_missing)
    app.connect("doctree-read", _write_executed)
    # A new hash makes Sphinx start a new environment: every page read and written again.
    return {"parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": extensions_key(app.confdir)}
