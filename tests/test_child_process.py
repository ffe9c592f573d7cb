"""The package's one child-process harness (attnbook._child_process), under both
``cost.peak_memory`` and the exercise checker: a child ends with its whole process
group, and a parent script without a ``__main__`` guard is not run again in the child."""

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from attnbook.exercises import EXERCISES
from attnbook.exercises.__main__ import main

LEFT_BEHIND = Path(__file__).parent / "hostile_answers" / "leaves_a_process_behind.py"
MARKER = "attnbook: left behind by a hostile answer"


def spinners():
    """The live processes that the hostile answer leaves_a_process_behind.py starts."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(MARKER in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found


def test_a_process_the_answer_started_ends_with_the_check():
    sdpa = next(ex.id for ex in EXERCISES.values() if ex.answer_name == "scaled_dot_product_attention")
    assert main([sdpa, str(LEFT_BEHIND)]) == 1
    deadline = time.monotonic() + 10  # the suite may be running the same file in another worker
    while spinners() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spinners() == []


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """The standard library's forkserver would run such a script again in every child."""
    script = tmp_path / "measure.py"
    script.write_text("import math\nfrom attnbook.cost import peak_memory\n"
                      "print('measured', peak_memory(math.factorial, 100).growth_bytes >= 0)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["measured True"], done.stdout + done.stderr
