"""一次性的子进程：包里需要“新进程”的地方（测峰值内存、运行练习的答案）都从这里起。

平台支持时，子进程从标准库 ``multiprocessing`` 的 forkserver 分叉而来：forkserver
只导入过一次 :data:`PRELOAD` 里的模块（因而也导入了 TensorFlow），什么都没运行过，
所以每个子进程只花一次分叉，而不是一次 TensorFlow 导入；其他平台用 spawn 方式新起进程。
每个子进程一开始就自成一个会话（``setsid``）：终端里的 Ctrl-C 只送到父进程，
:func:`end` 结束子进程时连同它启动的一切一起结束。

子进程不重新运行父进程的 ``__main__`` 脚本（标准库默认会这样做，没有
``if __name__ == "__main__":`` 保护的脚本会因此在子进程里再跑一遍），所以
``target`` 与参数要能按名字找到：用包里的模块级函数和普通数据。
"""

import contextlib
import functools
import io
import multiprocessing
import os
import signal
from multiprocessing import context, forkserver, reduction, spawn, util

try:
    from multiprocessing import popen_forkserver
except ImportError:  # no forkserver on this platform (Windows): children are spawned
    popen_forkserver = None

#: forkserver 预先导入的模块：整个包，和运行答案的子进程要用的模块。
PRELOAD = ["attnbook", "attnbook.exercises.running.child"]


def start(target, *args):
    """在新的子进程里运行 ``target(*args)``，返回已启动的 ``multiprocessing`` 进程对象。"""
    process = _context().Process(target=_in_own_session, args=(target, *args))
    process.start()
    return process


def ensure_running():
    """在后台启动 forkserver（不支持 forkserver 的平台上什么也不做）。"""
    if _context().get_start_method() == "forkserver":
        forkserver.ensure_running()


def end(process, timeout=10):
    """结束 ``process`` 和它的整个进程组（它启动的一切），并等它退出。"""
    if process.pid is not None and hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):  # not yet its own group, or gone
            os.killpg(process.pid, signal.SIGKILL)
    if process.is_alive():
        process.kill()
    process.join(timeout)


def _in_own_session(target, *args):
    if hasattr(os, "setsid"):
        os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    return target(*args)


@functools.cache
def _context():
    if popen_forkserver is None or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = _ForkServerContext()
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


if popen_forkserver is not None:
    class _Popen(popen_forkserver.Popen):
        """The standard library's forkserver launch, less the re-run of the parent's ``__main__``."""

        def _launch(self, process_obj):  # as multiprocessing.popen_forkserver.Popen._launch
            prep_data = spawn.get_preparation_data(process_obj._name)  # noqa: SLF001
            prep_data.pop("init_main_from_path", None)
            prep_data.pop("init_main_from_name", None)
            buf = io.BytesIO()
            context.set_spawning_popen(self)
            try:
                reduction.dump(prep_data, buf)
                reduction.dump(process_obj, buf)
            finally:
                context.set_spawning_popen(None)
            self.sentinel, w = forkserver.connect_to_new_process(self._fds)
            parent_w = os.dup(w)  # the child's sentinel of this parent
            self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
            with open(w, "wb", closefd=True) as f:
                f.write(buf.getbuffer())
            self.pid = forkserver.read_signed(self.sentinel)

    class _Process(context.ForkServerProcess):
        _Popen = staticmethod(_Popen)

    class _ForkServerContext(context.ForkServerContext):
        Process = _Process
