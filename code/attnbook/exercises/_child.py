"""The child process that runs the reader's code: ``python -m attnbook.exercises._child``.

It loads TensorFlow and Keras, says it is ready, and waits for one job from the parent
(on its standard input). The job names the exercise, the answer (pickled, or a file to
load) and the cases' tasks; the child lays its tripwires, loads the answer, runs the
tasks in order and sends back each result as plain data. Expected values never reach
this process, and it decides nothing: the parent judges every result. The child runs
one job and exits; the parent kills it (and anything it started) when the job is done,
late or too big.

The reader's ``print`` output and TensorFlow's logs go nowhere: descriptors 1 and 2
are the null device, and the messages travel on a copy of the original descriptor 1.
"""

import io
import os
import pickle
import signal
import sys
import threading


class _Channel:
    """The child's side of the conversation: frames out, one job in."""

    def __init__(self):
        self.out = os.fdopen(os.dup(1), "wb")
        self.into = os.fdopen(os.dup(0), "rb")
        self.lock = threading.Lock()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(), io.StringIO(), io.StringIO()

    def send(self, message):
        from ._protocol import dumps_json, write_frame

        with self.lock:
            write_frame(self.out, dumps_json(message))


def preload():
    """The expensive imports: done before a child says it is ready (or by the zygote)."""
    import keras  # noqa: F401

    from .. import _tf  # noqa: F401
    from . import _protocol, _tasks, _tripwire, catalog  # noqa: F401


def _warm_up():
    """Run a few small ops once, so the runtime's first-call costs come before the job."""
    from .._tf import tf

    x = tf.ones((2, 3, 4))
    tf.nn.softmax(tf.matmul(x, x, transpose_b=True)).numpy()


def main():
    """A child started as its own interpreter: preload, then serve one job."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills us
    channel = _Channel()
    preload()
    return serve(channel)


def serve(channel):
    """Say ready, take one job from the parent, run it."""
    from . import _protocol

    _warm_up()
    channel.send({"ready": os.getpid()})
    payload = _protocol.read_frame(channel.into, limit=2**31)
    if payload is None:
        return 0
    job = pickle.loads(payload)  # noqa: S301  (from the parent, which we trust)
    _run_job(job, channel)
    channel.out.flush()
    return 0


def _run_job(job, channel):
    import keras

    from . import _messages as say
    from . import _protocol, _tripwire
    from ._core import Fail
    from .catalog import get_exercise

    sys.path[:] = job["sys_path"]
    try:
        os.chdir(job["cwd"])
    except OSError:
        pass
    keras.config.set_dtype_policy(job["policy"])
    checker = get_exercise(job["exercise_id"]).checker

    def report(name):
        channel.send({"hit": name})

    _tripwire.install(checker.forbidden, report)
    if not job["allow_solutions"]:
        _tripwire.watch_solutions(report)

    channel.send({"loading": True})
    try:
        answer = _load(job["answer"])
    except _LoadError as err:
        channel.send({"load_error": str(err), "usage": err.usage})
        return
    problem = job["kind_problem"](answer) if job.get("kind_problem") else ""
    if problem:
        channel.send({"problem": problem})
        return
    if job["kind"] == "function":
        answer = getattr(answer, "python_function", answer)  # a tf.function: check its code itself
    channel.send({"loaded": True})
    noun = checker.noun
    for index, (function, args) in enumerate(job["tasks"]):
        try:
            message = {"result": _protocol.encode(function(answer, *args))}
        except Fail as err:
            message = {"fail": str(err)}
        except NotImplementedError as err:
            message = {"unfinished": say.unfinished(noun, err)}
        except BaseException as err:  # noqa: BLE001  (the reader's bug, even SystemExit)
            message = {"error": _describe(err, noun)}
        channel.send({"case": index, **message})
    channel.send({"done": True})


def _describe(err, noun):
    from . import _messages as say

    try:
        return say.describe_error(err, noun)
    except BaseException:  # noqa: BLE001  (an exception whose str() raises)
        return f"你的{noun}抛出了 {type(err).__name__}"


class _LoadError(Exception):
    """The answer could not be loaded; ``usage`` marks a file the command line named."""

    def __init__(self, text, usage=False):
        super().__init__(text)
        self.usage = usage


def _load(source):
    """The answer object: unpickled, or taken from a file the command line named."""
    kind = source[0]
    if kind == "pickle":
        try:
            return pickle.loads(source[1])  # noqa: S301  (the parent pickled it)
        except BaseException as err:  # noqa: BLE001
            from ._messages import error_text

            raise _LoadError(f"检查进程载入不了你的答案（{type(err).__name__}: {error_text(err)}）：它用到的"
                             "模块或对象在新的 Python 进程里找不到") from None
    _, path, name = source
    return _load_file(path, name)


def _load_file(path, name):
    import importlib.util

    from ._messages import error_text, reader_location

    base = os.path.basename(path)
    module_name = "_attnbook_answer_" + "".join(c if c.isalnum() else "_" for c in base)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # the answer may import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        line = f"第 {err.lineno} 行" if err.lineno else ""
        raise _LoadError(f"{base} {line}有语法错误：{err.msg}", usage=True) from None
    except BaseException as err:  # noqa: BLE001  (any error while the file runs, sys.exit too)
        raise _LoadError(f"加载 {base} 时出错：{type(err).__name__}: {error_text(err)}{reader_location(err)}",
                         usage=True) from None
    if name not in vars(module):
        raise _LoadError(f"{base} 里没有名为 {name} 的函数或类（可以用 --name 指定别的名字）", usage=True)
    return vars(module)[name]


if __name__ == "__main__":
    sys.exit(main())
