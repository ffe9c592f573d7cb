"""The child process that runs the reader's code (:func:`serve`, started by :mod:`.parent`).

It says it is ready, and waits for one :class:`Job` from the parent. The job names
the exercise, the answer (pickled, or a file to load) and the cases' tasks; the child
lays its tripwires, loads the answer, runs the tasks in order and sends back each
result as plain data (:class:`~.wire.Message`). Expected values never reach this
process, and it decides nothing: the parent judges every result. The child runs one
job; the parent ends it (and anything it started) when the job is done, late or too big.

The reader's ``print`` output and TensorFlow's logs go nowhere: descriptors 0, 1 and 2
are the null device, and the messages travel on the connection the parent gave.
"""

import contextlib
import dataclasses
import importlib.util
import io
import os
import pickle
import sys
import threading

import keras

from ..._tf import tf
from .. import _messages as say
from .._cases import Fail
from ..catalog import get_exercise
from . import tasks, tripwire
from .wire import Kind, Message, encode


@dataclasses.dataclass(frozen=True)
class PickledAnswer:
    """An answer object of the reader's process, pickled (``cloudpickle``)."""

    data: bytes

    def load(self):
        try:
            return pickle.loads(self.data)  # noqa: S301  (the parent pickled it)
        except BaseException as err:  # noqa: BLE001
            raise _LoadError(f"检查进程载入不了你的答案（{type(err).__name__}: {say.error_text(err)}）：它用到的"
                             "模块或对象在新的 Python 进程里找不到") from None


@dataclasses.dataclass(frozen=True)
class AnswerFile:
    """The object ``name`` of the answer file ``path`` (absolute), which only the child runs."""

    path: str
    name: str

    def load(self):
        base = os.path.basename(self.path)
        module_name = "_attnbook_answer_" + "".join(c if c.isalnum() else "_" for c in base)
        spec = importlib.util.spec_from_file_location(module_name, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        sys.path.insert(0, os.path.dirname(self.path))  # the answer may import its neighbours
        try:
            spec.loader.exec_module(module)
        except SyntaxError as err:
            line = f"第 {err.lineno} 行" if err.lineno else ""
            raise _LoadError(f"{base} {line}有语法错误：{err.msg}", usage=True) from None
        except BaseException as err:  # noqa: BLE001  (any error while the file runs, sys.exit too)
            raise _LoadError(f"加载 {base} 时出错：{type(err).__name__}: {say.error_text(err)}"
                             f"{say.reader_location(err)}", usage=True) from None
        if self.name not in vars(module):
            raise _LoadError(f"{base} 里没有名为 {self.name} 的函数或类（可以用 --name 指定别的名字）", usage=True)
        return vars(module)[self.name]


@dataclasses.dataclass(frozen=True)
class Job:
    """One check, as the parent sends it: ``tasks`` are the cases' ``(function, args)``."""

    exercise_id: str
    answer: PickledAnswer | AnswerFile
    allow_solutions: bool
    policy: str
    tasks: list
    sys_path: list
    cwd: str


class _LoadError(Exception):
    """The answer could not be loaded; ``usage`` marks a file the command line named."""

    def __init__(self, text, usage=False):
        super().__init__(text)
        self.usage = usage


def serve(connection):
    """Warm up, say ready, take one :class:`Job` from ``connection`` and run it."""
    send = _sender(connection)
    x = tf.ones((2, 3, 4))  # a few small ops, so the runtime's first-call costs come before the job
    tf.nn.softmax(tf.matmul(x, x, transpose_b=True)).numpy()
    send(Message(Kind.READY))
    try:
        job = connection.recv()  # from the parent, which we trust
    except EOFError:
        return
    _run_job(job, send)


def _sender(connection):
    """``send(message)``, safe from any thread; the standard descriptors go to the null device."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), io.StringIO(), io.StringIO()
    lock = threading.Lock()

    def send(message):
        with lock:
            connection.send_bytes(message.to_bytes())

    return send


def _run_job(job, send):
    sys.path[:] = job.sys_path
    with contextlib.suppress(OSError):
        os.chdir(job.cwd)
    keras.config.set_dtype_policy(job.policy)
    exercise = get_exercise(job.exercise_id)
    tripwire.install(exercise.checker.forbidden, lambda name: send(Message(Kind.HIT, name)))
    if not job.allow_solutions:
        tripwire.watch_solutions(lambda name: send(Message(Kind.HIT, name)))
    send(Message(Kind.LOADING))
    try:
        answer = job.answer.load()
    except _LoadError as err:
        send(Message(Kind.LOAD_ERROR, str(err), usage=err.usage))
        return
    problem = tasks.kind_problem(exercise.kind, exercise.signature, answer) if isinstance(job.answer, AnswerFile) else ""
    if problem:
        send(Message(Kind.PROBLEM, problem))
        return
    if exercise.kind == "function":
        answer = getattr(answer, "python_function", answer)  # a tf.function: check its code itself
    send(Message(Kind.LOADED))
    for index, (function, args) in enumerate(job.tasks):
        send(_run_task(index, function, args, answer, exercise.checker.noun))
    send(Message(Kind.DONE))


def _run_task(index, function, args, answer, noun):
    """The :class:`Message` of case ``index``: what ``function(answer, *args)`` returned or raised."""
    try:
        return Message(Kind.RESULT, case=index, value=encode(function(answer, *args)))
    except Fail as err:
        return Message(Kind.FAIL, str(err), case=index)
    except NotImplementedError as err:
        return Message(Kind.UNFINISHED, say.unfinished(noun, err), case=index)
    except BaseException as err:  # noqa: BLE001  (the reader's bug, even SystemExit)
        return Message(Kind.ERROR, _describe(err, noun), case=index)


def _describe(err, noun):
    try:
        return say.describe_error(err, noun)
    except BaseException:  # noqa: BLE001  (an exception whose str() raises)
        return f"你的{noun}抛出了 {type(err).__name__}"
