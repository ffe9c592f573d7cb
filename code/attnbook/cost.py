"""The cost ledger (成本账): timings, peak memory, the n² score table and serial steps.

Every function returns plain data (numbers, tuples, dicts or frozen dataclasses that
``dataclasses.asdict`` turns into dicts), so a page can print it and a benchmark can
write it to JSON. Timings are wall-clock times on the machine that runs them; compare
them only side by side within one run.
"""

import dataclasses
import functools
import multiprocessing
import statistics
import time
import traceback

import numpy as np

from . import _checks

# --- the ledger: plain arithmetic ----------------------------------------------------


def score_table(n, batch=1, heads=1, bytes_per_score=4, n_k=None):
    """Size of the full score table ``(batch, heads, n, n_k)`` of self-attention.

    Returns a dict: ``pairs`` (query-key pairs of one sequence and head, n · n_k),
    ``entries`` (batch · heads · pairs) and ``bytes`` / ``mib`` for ``bytes_per_score``
    bytes per entry (4 for float32). ``score_table(1000)["pairs"]`` is 1,000,000.
    """
    n_k = n if n_k is None else n_k
    for name, value in [("n", n), ("n_k", n_k), ("batch", batch), ("heads", heads),
                        ("bytes_per_score", bytes_per_score)]:
        _checks.positive_int(name, value)
    pairs = n * n_k
    entries = batch * heads * pairs
    nbytes = entries * bytes_per_score
    return {"n": n, "n_k": n_k, "batch": batch, "heads": heads, "pairs": pairs,
            "entries": entries, "bytes": nbytes, "mib": nbytes / 2**20}


def mha_forward_flops(batch, n, d_model, n_k=None):
    """Floating-point operations of one multi-head attention forward pass.

    Counts the four projections (query, key, value, output: ``2 · rows · d_model²``
    each) and the two products ``Q Kᵀ`` and ``weights · V`` (``2 · batch · n · n_k ·
    d_model`` each, summed over heads). Softmax, bias and reshapes are not counted, so
    the count is a lower bound on the work. A multiply-add is 2 operations.
    """
    n_k = n if n_k is None else n_k
    for name, value in [("batch", batch), ("n", n), ("d_model", d_model), ("n_k", n_k)]:
        _checks.positive_int(name, value)
    projections = 2 * batch * d_model**2 * (2 * n + 2 * n_k)
    products = 2 * (2 * batch * n * n_k * d_model)
    return projections + products


def loglog_slope(x, y):
    """Least-squares slope of ``log y`` against ``log x``: y ∝ xᵏ gives k.

    Linear cost gives about 1, the score table about 2. Needs at least two distinct
    positive ``x`` and positive ``y``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and equally long, got {x.shape} and {y.shape}.")
    if np.unique(x).size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError(
            f"need at least two distinct positive x and positive y, got x={x.tolist()} "
            f"and y={y.tolist()}."
        )
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


# --- timing --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of one call: the median and every repeat (warm-ups excluded)."""

    median_s: float
    times_s: tuple
    warmup: int

    @property
    def median_ms(self):
        return 1e3 * self.median_s


def time_call(fn, *args, repeats=7, warmup=2, **kwargs):
    """Time ``fn(*args, **kwargs)``: ``warmup`` untimed calls, then ``repeats`` timed ones.

    The warm-up calls absorb one-off costs such as tracing a ``tf.function``. Each timed
    call waits until its result is ready (TensorFlow results are fetched with
    ``.numpy()``, a no-copy view on CPU). Returns a :class:`Timing`; the median resists
    the odd slow repeat of a busy machine.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats <= 0:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}.")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer, got {warmup!r}.")
    for _ in range(warmup):
        _wait(fn(*args, **kwargs))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        _wait(fn(*args, **kwargs))
        times.append(time.perf_counter() - start)
    return Timing(median_s=statistics.median(times), times_s=tuple(times), warmup=warmup)


def _wait(result):
    """Block until every tensor in ``result`` (any nesting) has been computed."""
    if isinstance(result, (list, tuple)):
        for item in result:
            _wait(item)
    elif isinstance(result, dict):
        for item in result.values():
            _wait(item)
    elif hasattr(result, "numpy"):
        result.numpy()


# --- peak memory ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PeakMemory:
    """Resident memory of a call in a fresh process, in bytes.

    ``baseline_bytes`` is resident before the call (after ``setup``), ``peak_bytes`` the
    highest resident size during it, and ``growth_bytes`` their difference: what the
    call itself needed at its peak. ``method`` says how the peak was read.
    """

    baseline_bytes: int
    peak_bytes: int
    growth_bytes: int
    method: str

    @property
    def growth_mib(self):
        return self.growth_bytes / 2**20


def peak_memory(fn, *args, setup=None, setup_args=(), timeout_s=600):
    """Measure the peak resident memory of ``fn(*args, *setup(*setup_args))``.

    The call runs in a fresh child process, so memory that this process already holds,
    or that earlier measurements left in the allocator, cannot hide or inflate the
    result. Where the platform has it, the child is forked from a "forkserver" that has
    imported ``attnbook`` (and so TensorFlow) once and run nothing: each measurement
    then costs a fork, not a TensorFlow import. Elsewhere it is spawned. ``setup``
    (optional) runs first in the child, for example to build the inputs and warm up,
    and is not counted. ``fn``, ``setup`` and all arguments must be picklable:
    module-level functions and plain data, not lambdas.

    TensorFlow allocates outside Python's allocator, so ``tracemalloc`` cannot see it;
    the operating system's count of resident pages can. On Linux the peak counter
    (VmHWM) is reset just before the call (``/proc/self/clear_refs``); elsewhere the
    process's lifetime maximum (``ru_maxrss``) is used, which can only overestimate.

    Returns a :class:`PeakMemory`. Raises ``RuntimeError`` if the call fails or takes
    longer than ``timeout_s`` seconds.
    """
    ctx = _child_context()
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_measure_in_child, args=(sender, fn, args, setup, setup_args))
    process.start()
    sender.close()
    try:
        if not receiver.poll(timeout_s):
            raise RuntimeError(f"peak_memory: the call did not finish within {timeout_s} s.")
        status, payload = receiver.recv()
    except EOFError:
        status, payload = "error", "the measuring process died (out of memory?)"
    finally:
        process.join(timeout=10)
        if process.is_alive():  # timed out or stuck on the way out
            process.kill()
            process.join()
        receiver.close()
    if status == "error":
        raise RuntimeError(f"peak_memory: the call failed in the child process:\n{payload}")
    return PeakMemory(**payload)


@functools.cache
def _child_context():
    """A forkserver that preloads attnbook where available, else "spawn"."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["attnbook"])
    return ctx


def _measure_in_child(sender, fn, args, setup, setup_args):
    try:
        extra = tuple(setup(*setup_args)) if setup is not None else ()
        method = "VmHWM after clear_refs" if _reset_peak() else "ru_maxrss"
        baseline = _resident_bytes()
        _wait(fn(*args, *extra))
        peak = _peak_bytes(method)
        payload = dict(baseline_bytes=baseline, peak_bytes=peak,
                       growth_bytes=max(0, peak - baseline), method=method)
        sender.send(("ok", payload))
    except BaseException:  # noqa: BLE001  (report everything to the parent)
        sender.send(("error", traceback.format_exc()))
    finally:
        sender.close()


def _proc_status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def _reset_peak():
    """Reset the kernel's peak-RSS counter of this process; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _resident_bytes():
    try:
        return 1024 * _proc_status_kib("VmRSS")
    except OSError:
        return _maxrss_bytes()


def _peak_bytes(method):
    return 1024 * _proc_status_kib("VmHWM") if method.startswith("VmHWM") else _maxrss_bytes()


def _maxrss_bytes():
    import resource
    import sys

    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else 1024 * maxrss  # macOS: bytes; else KiB


def format_bytes(nbytes):
    """A byte count in the largest binary unit that keeps it ≥ 1: '39.1 KiB', '2.3 TiB'."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}.")
    value, unit = float(nbytes), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"


__all__ = [
    "PeakMemory", "Timing", "format_bytes", "loglog_slope", "mha_forward_flops", "peak_memory",
    "score_table", "time_call",
]
