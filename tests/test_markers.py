"""The test layers: markers that pytest refuses to guess, and one unit-test expression.

A misspelled marker (``@pytest.mark.slwo``) would otherwise make a slow test a unit test
without a word; ``--strict-markers`` in pytest.ini makes it a collection error. The
Makefile names the unit tests once, as ``UNIT_TESTS``, and every ``-m`` it passes is made
from that name.
"""

import re
import subprocess
import sys

from buildfiles import ROOT


def test_a_misspelled_marker_is_an_error(tmp_path):
    (tmp_path / "test_typo.py").write_text("import pytest\n\n\n@pytest.mark.slwo\ndef test_x():\n    pass\n",
                                           encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pytest.ini"), "--rootdir",
                           str(tmp_path), "-p", "no:cacheprovider", "-p", "no:xdist", "--collect-only", "-q",
                           str(tmp_path / "test_typo.py")], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, done.stdout
    assert "'slwo' not found in `markers` configuration option" in done.stdout + done.stderr


def test_the_makefile_names_the_unit_tests_once():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    expressions = re.findall(r'-m "([^"]*)"', makefile)
    assert expressions, "no -m expression found in the Makefile"
    spelled = [e for e in expressions if "$(UNIT_TESTS)" not in e]
    assert not spelled, f"-m expressions that spell the markers out instead of using $(UNIT_TESTS): {spelled}"
    unit = re.search(r"^UNIT_TESTS := (.+)$", makefile, re.M).group(1)
    declared = re.findall(r"^    (\w+)(?:\(\w+\))?:", (ROOT / "pytest.ini").read_text(encoding="utf-8"), re.M)
    needs_a_build = {"book", "browser", "build", "pdf"}
    assert needs_a_build <= set(declared), declared
    assert unit == " and ".join(f"not {m}" for m in sorted(needs_a_build)), unit
