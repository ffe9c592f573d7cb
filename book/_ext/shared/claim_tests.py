"""The tests that back claims (``@pytest.mark.claim("id")``): found, run once per change, read back.

:func:`test_backings` finds the marked tests; :class:`MarkedTests` runs them with
pytest in a subprocess while the build goes on, keyed by the execution cache's key of
the package (the same digest that decides when the pages run again) and the tests.
"""

import ast
import functools
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from sphinx.util import logging

from book._ext.shared.checkout import dependency_key, files_digest

logger = logging.getLogger(__name__)

# --- the marked tests, run once per change of what they test -----------------------------

KEEP_RESULTS = 3


def tests_key(root, tests_dir, node_ids):
    """A short hash of the test ids, the tests, pytest.ini (its markers and options decide
    whether they run), and the execution cache's key of what the pages depend on (the
    package, requirements.txt, the Python and kernel versions)."""
    return files_digest(root, [Path(tests_dir), "pytest.ini"], salt=f"{dependency_key(root)}|{sorted(node_ids)}")


def parse_junit(text):
    """``{"tests/test_x.py::test_name": outcome}`` from a pytest JUnit XML report; a test
    run with several parameters takes its worst outcome (failed, skipped, passed)."""
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    found = {}
    for case in ElementTree.fromstring(text).iter("testcase"):
        module = next((part for part in case.get("classname", "").split(".") if part.startswith("test_")), None)
        if module is None:
            continue
        test = f"tests/{module}.py::{case.get('name', '').split('[')[0]}"
        failed = case.find("failure") is not None or case.find("error") is not None
        outcome = "failed" if failed else "skipped" if case.find("skipped") is not None else "passed"
        if rank[outcome] >= rank[found.get(test, "passed")]:
            found[test] = outcome
    return found


class MarkedTests:
    """The tests ``node_ids`` ("tests/test_x.py::test_y"), run with pytest in a subprocess
    that starts at once (the build reads its pages meanwhile), or read from ``results_dir``
    when nothing they depend on changed. :meth:`results` waits for them."""

    def __init__(self, root, tests_dir, node_ids, results_dir):
        self.node_ids, self.results_dir = sorted(node_ids), Path(results_dir)
        self.cached = self.results_dir / f"{tests_key(root, tests_dir, self.node_ids)}.json"
        self.proc = None
        if self.node_ids and not self.cached.is_file():
            self.tmp = tempfile.TemporaryDirectory()
            self.log = open(Path(self.tmp.name) / "log.txt", "w+", encoding="utf-8")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pytest", *self.node_ids, "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                 f"--junitxml={Path(self.tmp.name) / 'report.xml'}"],
                cwd=root, stdout=self.log, stderr=subprocess.STDOUT, text=True)

    def results(self):
        """``{node id: outcome}``; a test that did not run at all (a collection error) failed."""
        if self.proc is None:
            return json.loads(self.cached.read_text(encoding="utf-8")) if self.node_ids else {}
        self.proc.wait(timeout=1800)
        report = Path(self.tmp.name) / "report.xml"
        if not report.is_file():  # pytest did not start: say why, every test counts as failed
            self.log.seek(0)
            logger.warning("claims ledger: the tests that back claims did not run:\n" + self.log.read()[-2000:],
                           type="claims")
        found = parse_junit(report.read_text(encoding="utf-8")) if report.is_file() else {}
        self.stop()
        results = {node: found.get(node, "failed") for node in self.node_ids}
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self.cached.write_text(json.dumps(results, indent=1), encoding="utf-8")
        for old in sorted(self.results_dir.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP_RESULTS:]:
            old.unlink(missing_ok=True)
        return results

    def stop(self):
        """End the run (a build that fails before it needs the results) and clean up."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.tmp.cleanup()
        self.proc = None


def run_marked_tests(root, tests_dir, node_ids, results_dir):
    """:class:`MarkedTests`, started and waited for."""
    return MarkedTests(root, tests_dir, node_ids, results_dir).results()


# --- what backs a claim besides its check ----------------------------------------------


def test_backings(tests_dir):
    """``{claim id: [(file, test name, line)]}`` for every ``@pytest.mark.claim("id")``
    (read again only when a test file changes: a build asks several times)."""
    paths = sorted(Path(tests_dir).glob("test_*.py"))
    return _backings(tuple((path, path.stat().st_mtime_ns) for path in paths))


@functools.lru_cache(maxsize=2)
def _backings(files):
    found = {}
    for path, _ in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for claim_id in _claim_marks(node):
                found.setdefault(claim_id, []).append((f"tests/{path.name}", node.name, node.lineno))
    return found


def _claim_marks(function):
    for decorator in function.decorator_list:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "claim" and decorator.args
                and isinstance(decorator.args[0], ast.Constant)):
            yield decorator.args[0].value
