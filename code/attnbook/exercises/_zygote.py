"""A zygote: a process that has loaded TensorFlow and forks a fresh child per check.

Started once per parent process (a notebook's kernel), it never runs the reader's
code and never runs a TensorFlow op, so every child it forks starts from the same
clean state at the cost of a fork instead of an import. The parent sends it the two
pipe ends of a new child over a UNIX socket (``SCM_RIGHTS``); it forks, and answers
with the child's pid. The child starts its own session (``setsid``), so the parent
can kill it and everything it started as one process group. The zygote ends when
the parent's end of the socket closes. POSIX only: elsewhere each child is a fresh
interpreter.

    python -P -m attnbook.exercises._zygote FD
"""

import os
import signal
import socket
import struct
import sys

_PID = struct.Struct(">q")


def main(fd):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    sock = socket.socket(fileno=fd)
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    from ._child import preload

    preload()
    sock.sendall(b"R")
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1, 2)
        except OSError:
            os._exit(0)
        if not data:  # the parent has gone: no clean-up is worth its time
            os._exit(0)
        if len(fds) != 2:
            for extra in fds:
                os.close(extra)
            sock.sendall(_PID.pack(-1))
            continue
        pid = os.fork()
        if pid == 0:
            sock.close()
            _become_child(*fds)
        for extra in fds:
            os.close(extra)
        sock.sendall(_PID.pack(pid))


def _become_child(stdin_fd, stdout_fd):
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.close(stdin_fd)
        os.close(stdout_fd)
        from ._child import _Channel, serve

        code = serve(_Channel())
    except BaseException:  # noqa: BLE001  (the parent sees the pipe close)
        code = 1
    os._exit(code or 0)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
