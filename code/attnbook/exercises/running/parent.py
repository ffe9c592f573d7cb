"""The parent's side of the child process (:mod:`.child`): start it, talk to it, end it.

Children come from the package's one child-process harness (:mod:`attnbook._child_process`),
each in a session of its own: ending its process group also ends whatever the reader's
code started.

After each check one *spare* child is started in the background and warms up; the
next check in the same kernel takes it. A spare has run nothing but our warm-up: what
one answer did to its own child never reaches a later check.
"""

import atexit
import multiprocessing
import os
import signal
import threading
import time

from ... import _child_process
from .child import serve
from .wire import MAX_MESSAGE, Kind, Message, ProtocolError

STARTUP_LIMIT = 300.0  # seconds for a child to warm up on a busy machine
_POLL = 0.05


class ChildGone(Exception):
    """The child ended (or garbled its messages) before it answered; the text says how."""


class Timeout(Exception):
    """The child did not answer within the time limit."""


class MemoryExceeded(Exception):
    """The child's memory grew past the limit; args: (used MiB, limit MiB)."""


class Child:
    """One child process and our end of its connection."""

    def __init__(self):
        self.connection, theirs = multiprocessing.Pipe()
        self.process = _child_process.start(serve, theirs)
        theirs.close()
        self.baseline = None  # MiB resident once it is ready

    def wait_ready(self):
        """Wait for the child's warm-up; raise :class:`ChildGone` if it cannot start."""
        if self.baseline is None:
            if self.receive(STARTUP_LIMIT).kind is not Kind.READY:
                raise ChildGone("检查进程没能正常启动")
            self.baseline = _resident_mib(self.process.pid)

    def send(self, job):
        try:
            self.connection.send(job)
        except OSError:
            raise ChildGone(self._ended()) from None

    def receive(self, time_limit, memory_limit=None):
        """The next :class:`~.wire.Message`; :class:`Timeout`, :class:`MemoryExceeded` or
        :class:`ChildGone` otherwise. memory_limit: MiB above the ready child's size."""
        deadline = time.monotonic() + time_limit
        while not self.connection.poll(_POLL):
            if memory_limit is not None and self.baseline is not None:
                used = _resident_mib(self.process.pid)
                if used is not None and used - self.baseline > memory_limit:
                    raise MemoryExceeded(used - self.baseline, memory_limit)
            if time.monotonic() > deadline:
                raise Timeout()
        try:
            return Message.from_bytes(self.connection.recv_bytes(MAX_MESSAGE))
        except ProtocolError as err:
            raise ChildGone(f"检查进程发来的消息无法读取（{err}）") from None
        except OSError:  # longer than MAX_MESSAGE: the connection is closed unread
            raise ChildGone("检查进程发来的消息无法读取（消息太大）") from None
        except EOFError:
            raise ChildGone(self._ended()) from None

    def _ended(self):
        self.process.join(timeout=2)
        code = self.process.exitcode
        if code is None:
            return "检查进程不再回应"
        how = f"退出码 {code}" if code >= 0 else f"被信号 {_signal_name(-code)} 结束"
        return f"检查进程提前结束，没有交回结果：{how}"

    def kill(self):
        """End the child and its whole process group; wait for it."""
        _child_process.end(self.process)
        self.connection.close()


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _resident_mib(pid):
    """The resident memory of process ``pid`` in MiB (Linux), or None."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


# --- the spare -------------------------------------------------------------------------

_spare = None
_lock = threading.Lock()


def _pop_spare():
    global _spare
    with _lock:
        child, _spare = _spare, None
    return child


def take():
    """A child that has run nothing yet: the spare if there is a live one, else a new one."""
    child = _pop_spare()
    if child is not None and child.process.is_alive():
        return child
    if child is not None:
        child.kill()
    return Child()


def prepare():
    """Start a spare child that warms up in the background, unless one is there already."""
    global _spare
    with _lock:
        if _spare is not None and _spare.process.is_alive():
            return
    try:
        child = Child()
    except OSError:  # no spare this time; the next check starts its own child
        return
    with _lock:
        _spare = child


def discard():
    """End the spare child, if any."""
    child = _pop_spare()
    if child is not None:
        child.kill()


atexit.register(discard)
