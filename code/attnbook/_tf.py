"""Import TensorFlow without its start-up log lines.

When TensorFlow loads, its C++ runtime writes a few informational lines straight to
file descriptor 2 (the oneDNN notice, the absl "before InitializeLog" banner, the CPU
feature guard). ``TF_CPP_MIN_LOG_LEVEL`` hides most of them, but not the oneDNN line,
and the usual fix, ``TF_ENABLE_ONEDNN_OPTS=0``, makes attention about 2.5x slower on
CPUs with oneDNN. So this module keeps oneDNN on and instead captures descriptor 2
while TensorFlow loads, drops the known start-up lines and passes anything else on.
"""

import contextlib
import importlib.metadata
import os
import sys
import tempfile

# Start-up lines that carry no information for a reader of the book.
_STARTUP_NOISE = (
    "All log messages before absl::InitializeLog() is called",
    "oneDNN custom operations are on",
    "cpu_feature_guard.cc",
    "To enable the following instructions",
    "Unable to register cu",  # cuDNN/cuFFT/cuBLAS factories, on GPU builds
    "Could not find cuda drivers",  # the GPU build (`tensorflow`) on a machine without one
    "could not open file to read NUMA node",
)


@contextlib.contextmanager
def _capture_fd2():
    """Redirect OS-level stderr to a temporary file; yield a list that gets its lines."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            lines.extend(tmp.read().decode("utf-8", "replace").splitlines())


def _extra_requirement(extra, default):
    """The requirement that ``attnbook[extra]`` adds, read from the installed metadata."""
    try:
        requirements = importlib.metadata.requires("attnbook") or []
    except importlib.metadata.PackageNotFoundError:
        return default
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        if marker.replace("'", '"').split() == ["extra", "==", f'"{extra}"']:
            return spec.strip()
    return default


def import_tensorflow():
    """Return the ``tensorflow`` module, imported without its start-up noise.

    Lines that are not known start-up noise are written to ``sys.stderr`` so that real
    errors stay visible. If TensorFlow is already imported this is a plain import.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep errors, drop INFO/WARNING
    with _capture_fd2() as lines:
        try:
            import tensorflow
        except ModuleNotFoundError as err:
            if err.name != "tensorflow":
                raise
            cpu = _extra_requirement("cpu", "tensorflow-cpu")
            gpu = _extra_requirement("gpu", "tensorflow[and-cuda]")
            raise ModuleNotFoundError(
                f'attnbook 需要 TensorFlow，但当前环境里没有安装：只有 CPU 的机器运行 pip install "{cpu}"，'
                f'有 NVIDIA GPU 的机器运行 pip install "{gpu}"（在 Notebook 里写作 %pip install …，装好后重启内核）。',
                name="tensorflow") from None
    kept = [line for line in lines if not any(noise in line for noise in _STARTUP_NOISE)]
    if kept:
        print("\n".join(kept), file=sys.stderr)
    return tensorflow


tf = import_tensorflow()
