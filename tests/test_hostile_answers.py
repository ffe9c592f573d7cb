"""The hostile-answer suite: every file in tests/hostile_answers gets the exit status and
the report its header asks for, and no answer but a correct one is told 通过.

The files run through the command line's ``main`` in this process (the answer itself
runs only in the checker's child process); the ones that end their process, and Ctrl-C,
also run as real commands. Bad paths and arguments get one Chinese line and status 2.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from attnbook.exercises import EXERCISES, FAILED, check
from attnbook.exercises.__main__ import main

FOLDER = Path(__file__).parent / "hostile_answers"
FILES = sorted(FOLDER.glob("*.py"))
ID = {ex.answer_name: ex.id for ex in EXERCISES.values()}
SDPA = ID["scaled_dot_product_attention"]
HEADER = re.compile(r"^# (exercise|status|says|args): (.*)$", re.M)


def header(path):
    """``(exercise id, status, [texts], [args])`` from a file's header comments."""
    fields = {"says": [], "args": []}
    for key, value in HEADER.findall(path.read_text(encoding="utf-8")):
        if key in ("says", "args"):
            fields[key] += [value] if key == "says" else value.split()
        else:
            fields[key] = value.strip()
    return ID[fields["exercise"]], int(fields["status"]), fields["says"], fields["args"]


def passed_line(text):
    return re.search(r"^练习 \S+“.*”：通过", text, re.M) is not None


def test_the_suite_covers_what_the_issue_lists():
    names = {path.stem for path in FILES}
    assert len(names) >= 20 and any(name.startswith("good_") for name in names)
    for path in FILES:
        exercise_id, status, says, _ = header(path)
        assert says and (status == 0) == path.stem.startswith("good_"), path.name


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_hostile_answer_gets_its_verdict(path, capsys):
    exercise_id, status, says, args = header(path)
    assert main([exercise_id, str(path), *args]) == status
    captured = capsys.readouterr()
    text = captured.out + captured.err
    for needle in says:
        assert needle in text, text
    assert passed_line(text) == (status == 0), text
    assert "Traceback" not in text


def test_a_patched_module_in_one_check_does_not_reach_the_next():
    """The answer patches NumPy and the checker's comparison in its child; the next check
    (a fresh child) of an honest wrong answer still fails, and so does the patcher."""
    def patcher(query, key, value, mask=None):
        import attnbook.exercises._compare as compare

        np.all = lambda *args, **kwargs: True
        compare.compare = lambda *args, **kwargs: None
        return query, query

    def wrong(query, key, value, mask=None):
        import tensorflow as tf

        weights = tf.nn.softmax(tf.matmul(query, key, transpose_b=True), -1)  # not scaled
        return weights @ value, weights

    assert check(SDPA, patcher).state == FAILED
    assert np.all is not None and np.all([True, False]) == np.False_  # our NumPy is untouched
    verdict = check(SDPA, wrong)
    assert verdict.state == FAILED and "看起来没有除以 √d_k" in str(verdict)


def test_an_answer_dressed_as_a_solution_may_not_import_the_solutions():
    def scaled_dot_product_attention(query, key, value, mask=None):
        from attnbook.exercises import solutions

        return solutions.scaled_dot_product_attention(query, key, value, mask)

    scaled_dot_product_attention.__module__ = "attnbook.exercises.solutions"
    verdict = check(SDPA, scaled_dot_product_attention)
    assert verdict.state == FAILED and "导入了参考解答" in str(verdict), str(verdict)


# --- bad paths and arguments: one line, status 2 --------------------------------------


@pytest.mark.parametrize(
    "make, argv, needle",
    [
        (lambda d: (d / "answer.txt").write_text("x = 1\n"), [SDPA, "{d}/answer.txt"], "应是 .py 文件"),
        (lambda d: (d / "folder.py").mkdir(), [SDPA, "{d}/folder.py"], "是一个文件夹"),
        (lambda d: (d / "nul.py").write_bytes(b"x = 1\n\0\n"), [SDPA, "{d}/nul.py"], "nul.py 第 2 行有空字节"),
        (lambda d: (d / "utf16.py").write_text("x = 1\n", encoding="utf-16"), [SDPA, "{d}/utf16.py"],
         "是 UTF-16 编码的"),
        (lambda d: (d / "latin.py").write_bytes(b"# caf\xe9\n"), [SDPA, "{d}/latin.py"], "不是 UTF-8 编码"),
        (None, [SDPA, "{d}/missing.py"], "找不到文件"),
        (None, [SDPA, "{d}/a.py", "--time-limit", "nan"], "--time-limit: 应是有限的正数，得到 'nan'"),
        (None, [SDPA, "{d}/a.py", "--time-limit", "inf"], "--time-limit: 应是有限的正数，得到 'inf'"),
        (None, [SDPA, "{d}/a.py", "--time-limit", "-1"], "--time-limit: 应是有限的正数"),
        (None, [SDPA, "{d}/a.py", "--memory-limit", "nan"], "--memory-limit: 应是有限的正数"),
    ],
    ids=["txt", "directory", "null-bytes", "utf-16", "latin-1", "missing", "nan", "inf", "negative", "memory-nan"],
)
def test_bad_path_or_argument_is_one_line_and_status_2(tmp_path, capsys, make, argv, needle):
    if make:
        make(tmp_path)
    assert main([arg.format(d=tmp_path) for arg in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and needle in captured.err, captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err


# --- as real commands ------------------------------------------------------------------


def command(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "attnbook.exercises", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8", **kwargs)


def gone(pid, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_exits_from_the_answer_are_failures_of_the_real_command():
    runs = {name: command(SDPA, str(FOLDER / f"{name}.py")) for name in ("exits_inside_the_answer", "sys_exit_at_top")}
    for name, status in (("exits_inside_the_answer", 1), ("sys_exit_at_top", 2)):
        out, err = runs[name].communicate(timeout=300)
        assert runs[name].returncode == status, (out, err)
        assert not passed_line(out) and "Traceback" not in out + err


def test_list_into_a_closed_pipe_says_nothing_more():
    shell = f"{sys.executable} -m attnbook.exercises --list | head -1"
    done = subprocess.run(shell, shell=True, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.stdout.startswith(f"{list(EXERCISES)[0]} ") and len(done.stdout.splitlines()) == 1
    assert done.stderr == "", done.stderr


def test_ctrl_c_stops_the_check_at_once_and_leaves_no_process(tmp_path):
    pid_file = tmp_path / "pid"
    answer = tmp_path / "hangs.py"
    answer.write_text(f"import os, time\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
                      f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                      f"    while True:\n        time.sleep(0.01)\n", encoding="utf-8")
    run = command(SDPA, str(answer), "--time-limit", "600", start_new_session=True,  # SIGINT as in a terminal
                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    out, err = run.communicate(timeout=120)  # far inside the 600 s limit: the interrupt ended it
    assert run.returncode == 130 and "已中断" in out + err and "Traceback" not in out + err
    assert gone(child)


def test_ctrl_c_in_a_notebook_ends_the_check(tmp_path):
    """A kernel interrupt raises KeyboardInterrupt in the parent: the verdict is 已中断."""
    import _thread
    import threading

    pid_file = tmp_path / "pid"

    def hangs(query, key, value, mask=None):
        pid_file.write_text(str(os.getpid()))
        while True:
            pass

    def interrupt():
        while not (pid_file.exists() and pid_file.read_text()):
            time.sleep(0.02)
        _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    # A kernel runs with Python's own Ctrl-C handler; an earlier test in this worker (a
    # notebook run) may have left another, and then interrupt_main() does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        verdict = check(SDPA, hangs)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert verdict.interrupted and not verdict.passed and str(verdict).splitlines()[0].endswith("：已中断")
    assert gone(int(pid_file.read_text()))


@pytest.mark.slow
def test_an_import_of_the_solutions_is_caught_when_they_are_loaded_and_compiled(tmp_path):
    """A fresh command whose process has the solutions loaded and compiled to bytecode
    (as a wheel's venv has): the answer's import_module opens only the .pyc, and must
    still be caught."""
    script = tmp_path / "run.py"
    script.write_text(
        "import py_compile, sys\n"
        "import attnbook.exercises.solutions as s\n"
        "py_compile.compile(s.__file__)\n"
        "from attnbook.exercises.__main__ import main\n"
        f"sys.exit(main([{SDPA!r}, {str(FOLDER / 'imports_the_solutions.py')!r}]))\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "导入了参考解答" in done.stdout + done.stderr and not passed_line(done.stdout)
