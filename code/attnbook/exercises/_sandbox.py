"""The parent's side of the child process (``_child``): start it, talk to it, end it.

A child runs in its own session, so a Ctrl-C typed in a terminal reaches only the
parent, and killing the child's process group also ends whatever the reader's code
started. Loading TensorFlow takes seconds, so on POSIX a child is forked from a
*zygote* (:mod:`._zygote`) that has loaded it once and runs nothing else; elsewhere
each child is a fresh interpreter (``python -P -m attnbook.exercises._child``).

After each check one *spare* child is forked in the background and warms up; the
next check in the same kernel takes it. A spare has run nothing but our warm-up:
what one answer did to its own child never reaches a later check.
"""

import atexit
import os
import pickle
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from ._protocol import ProtocolError, loads_json, read_frame, write_frame

STARTUP_LIMIT = 300.0  # seconds for a child to load TensorFlow on a busy machine
_POLL = 0.05
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ChildGone(Exception):
    """The child ended (or garbled its messages) before it answered; the text says how."""


class Timeout(Exception):
    """The child did not answer within the time limit."""


class MemoryExceeded(Exception):
    """The child's memory grew past the limit; args: (used MiB, limit MiB)."""


def _environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    return env


def _python(module, **options):
    """``python -P -m attnbook.exercises.<module>`` in a session of its own."""
    extra = {"start_new_session": True} if os.name == "posix" else {
        "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    return subprocess.Popen([sys.executable, "-P", "-m", f"{__package__}.{module}", *options.pop("args", ())],
                            stderr=subprocess.DEVNULL, env=_environment(), **extra, **options)


class Child:
    """One child process and the thread that reads its messages."""

    def __init__(self, zygote=None):
        if zygote is None:
            self.process = _python("_child", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self.pid, self.stdin, self.stdout = self.process.pid, self.process.stdin, self.process.stdout
        else:
            self.process = None
            self.pid, self.stdin, self.stdout = zygote.fork()
        self.messages = queue.Queue()
        self.ready = False
        self.baseline = None
        threading.Thread(target=self._read, name="attnbook-child-reader", daemon=True).start()

    def _read(self):
        try:
            while True:
                payload = read_frame(self.stdout)
                if payload is None:
                    break
                self.messages.put(("message", loads_json(payload)))
        except ProtocolError as err:
            self.messages.put(("garbled", str(err)))
        except (OSError, ValueError):
            pass
        self.messages.put(("eof", None))

    @property
    def alive(self):
        if self.process is not None:
            return self.process.poll() is None
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return True

    def wait_ready(self):
        """Wait for the child's imports; raise :class:`ChildGone` if it cannot start."""
        if self.ready:
            return
        message = self.receive(STARTUP_LIMIT)
        if "ready" not in message:
            raise ChildGone("检查进程没能正常启动")
        self.ready = True
        self.baseline = _resident_mib(self.pid)

    def send(self, job):
        try:
            write_frame(self.stdin, pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
            self.stdin.close()
        except OSError:
            raise ChildGone(self._ended()) from None

    def receive(self, time_limit, memory_limit=None):
        """The next message (a dict); :class:`Timeout`, :class:`MemoryExceeded` or
        :class:`ChildGone` otherwise. memory_limit: MiB above the ready child's size."""
        deadline = time.monotonic() + time_limit
        while True:
            try:
                kind, message = self.messages.get(timeout=_POLL)
            except queue.Empty:
                if memory_limit is not None and self.baseline is not None:
                    used = _resident_mib(self.pid)
                    if used is not None and used - self.baseline > memory_limit:
                        raise MemoryExceeded(used - self.baseline, memory_limit) from None
                if time.monotonic() > deadline:
                    raise Timeout() from None
                continue
            if kind == "message":
                return message
            if kind == "garbled":
                raise ChildGone(f"检查进程发来的消息无法读取（{message}）")
            raise ChildGone(self._ended())

    def _ended(self):
        if self.process is None:  # a zygote's child: the zygote reaps it
            return "检查进程提前结束，没有交回结果"
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "检查进程不再回应"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"检查进程被信号 {name} 结束，没有交回结果"
        return f"检查进程提前退出（退出码 {code}），没有交回结果"

    def kill(self):
        """End the child and its whole process group; wait for it."""
        if os.name == "posix":
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        else:
            _wait_gone(self.pid)
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


def _resident_mib(pid):
    """The resident memory of process ``pid`` in MiB (Linux), or None."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _wait_gone(pid, timeout=10.0):
    """Wait until ``pid`` no longer exists (the zygote reaps its children)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.005)


class Zygote:
    """The forking process of :mod:`._zygote`, and our end of its socket."""

    _PID = struct.Struct(">q")

    def __init__(self):
        ours, theirs = socket.socketpair()
        self.socket = ours
        self.process = _python("_zygote", args=(str(theirs.fileno()),), pass_fds=(theirs.fileno(),),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self.ready = False
        self.lock = threading.Lock()

    @property
    def alive(self):
        return self.process.poll() is None

    def fork(self):
        """``(pid, stdin, stdout)`` of a new child; :class:`ChildGone` if impossible."""
        with self.lock:
            try:
                if not self.ready:
                    self.socket.settimeout(STARTUP_LIMIT)
                    if self.socket.recv(1) != b"R":
                        raise OSError("no ready byte")
                    self.ready = True
                job_read, job_write = os.pipe()
                out_read, out_write = os.pipe()
                try:
                    socket.send_fds(self.socket, [b"F"], [job_read, out_write])
                    pid = self._PID.unpack(_recv_exactly(self.socket, self._PID.size))[0]
                finally:
                    os.close(job_read)
                    os.close(out_write)
            except (OSError, struct.error):
                raise ChildGone("检查进程没能正常启动") from None
        if pid <= 0:
            os.close(job_write)
            os.close(out_read)
            raise ChildGone("检查进程没能正常启动")
        return pid, os.fdopen(job_write, "wb"), os.fdopen(out_read, "rb")

    def close(self):
        """End the zygote at once: it holds no state worth a clean exit."""
        self.socket.close()
        self.process.kill()
        self.process.wait()


def _recv_exactly(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


# --- the zygote and the spare ------------------------------------------------------------

_zygote = None
_spare = None
_lock = threading.Lock()


def _new_child():
    global _zygote
    if os.name != "posix" or not hasattr(socket, "send_fds"):
        return Child()
    with _lock:
        if _zygote is None or not _zygote.alive:
            _zygote = Zygote()
        zygote = _zygote
    return Child(zygote)


def take():
    """A child that has run nothing yet: the spare if there is a live one, else a new one."""
    global _spare
    with _lock:
        child, _spare = _spare, None
    if child is not None and child.alive:
        return child
    if child is not None:
        child.kill()
    return _new_child()


def prepare():
    """Fork a spare child that warms up in the background, unless one is there already."""
    global _spare
    with _lock:
        if _spare is not None and _spare.alive:
            return
    try:
        child = _new_child()
    except ChildGone:
        return
    with _lock:
        _spare = child


def discard():
    """End the spare child, if any."""
    global _spare
    with _lock:
        child, _spare = _spare, None
    if child is not None:
        child.kill()


def _shutdown():
    discard()
    if _zygote is not None:
        _zygote.close()


atexit.register(_shutdown)
