"""成本账的基准测试：``python -m attnbook.bench [--out DIR] [--quick] [--label TEXT]``。

命令行只做三件事：用 :mod:`attnbook.measurements` 的函数在同一次运行里、同一台机器上
并排测量，按 :func:`evaluate_targets` 的各项目标判定，再把结果写入 ``DIR/results.json``
（每个目标、它的实测值与是否达标），把图写入 ``DIR/*.png``。结果文件带着它的出处
（:func:`provenance`：设备、驱动、核数、TensorFlow 版本、代码的提交与日期），可以提交到
``book/data/bench/``，成本账一页把它的数与本次构建的数分开并列。
"""

import argparse
import datetime
import functools
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import keras

from . import cost
from ._tf import tf
from .measurements import (CHUNK_SIZE, MATMUL_SIZE, WINDOW, measure_mha, measure_rnn_vs_attention,
                           measure_variants)

RESULTS_FORMAT = 2  # 2: the results file carries "provenance" (1 had "machine" only)
PARALLEL_KINDS = ("GPU", "TPU")  # device kinds that count as parallel hardware
RNN_SETTINGS = {"batch": 8, "d_model": 64, "heads": 4}  # GRU vs attention, as measured here

# --- where the numbers come from ---------------------------------------------------------


def provenance(label=None):
    """本次运行的出处，写进结果文件的 ``"provenance"``。

    Args:
        label: 可选的说明文字（例如机器的名字），原样记下。

    Returns:
        字典：``device``（``kind`` 为 ``"GPU"``、``"TPU"`` 或 ``"CPU"``，``model`` 为设备
        型号；有 GPU 时是第一块 GPU，否则是 CPU）、``driver``（``nvidia-smi`` 报告的驱动
        版本，没有时为 ``None``）、``cpu_count``（逻辑核数）、``tensorflow``、``keras``、
        ``python``、``platform``、``commit``（包源码所在 git 检出的提交 ``sha`` 与
        ``dirty``：包的源码是否有未提交的改动；不在检出里时为 ``None``）、``date``
        （UTC 时间，ISO 8601）与 ``label``。
    """
    kind, model = _device()
    return {"device": {"kind": kind, "model": model}, "driver": _nvidia_driver() if kind == "GPU" else None,
            "cpu_count": os.cpu_count(), "tensorflow": tf.__version__, "keras": keras.__version__,
            "python": platform.python_version(), "platform": platform.platform(), "commit": _commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "label": label}


def _device():
    """``(kind, model)`` of the device the measurements ran on: the first GPU or TPU, else the CPU."""
    for kind in PARALLEL_KINDS:
        devices = tf.config.list_physical_devices(kind)
        if devices:
            details = tf.config.experimental.get_device_details(devices[0]) if kind == "GPU" else {}
            return kind, details.get("device_name") or devices[0].name
    return "CPU", _cpu_model()


def _cpu_model(cpuinfo="/proc/cpuinfo"):
    """The CPU's model name from ``/proc/cpuinfo``, else what :mod:`platform` knows."""
    try:
        for line in Path(cpuinfo).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")) and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _run(*command, cwd=None):
    """The stripped stdout of ``command``, or None when it cannot run or fails."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _nvidia_driver():
    """The NVIDIA driver version (``nvidia-smi``), or None."""
    out = _run("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader")
    return out.splitlines()[0].strip() if out else None


def _commit(source=Path(__file__).resolve().parent):
    """``{"sha", "dirty"}`` of the git checkout holding the package source, or None."""
    sha = _run("git", "rev-parse", "HEAD", cwd=source)
    if not sha:
        return None
    changes = _run("git", "status", "--porcelain", "--untracked-files=no", "--", ".", cwd=source)
    return {"sha": sha, "dirty": bool(changes)}


# --- targets and the command line ----------------------------------------------------


def _target(name, measured, op, goal, note=""):
    ok = measured >= goal if op == ">=" else measured <= goal
    return {"name": name, "measured": float(measured), "target": f"{op} {goal}",
            "passed": bool(ok), "note": note}


def evaluate_targets(mha, variants, slope_from=2048):
    """基准测试的各项目标，返回 ``{name, measured, target, passed, note}`` 的列表。

    ``mha`` 与 ``variants`` 是 :func:`attnbook.measurements.measure_mha` 与
    :func:`attnbook.measurements.measure_variants` 的结果；时间的对数斜率只用
    ``n >= slope_from`` 的点拟合（没有这样的点时用全部的点）。
    """
    targets = [
        _target("forward speed-up vs keras.layers.MultiHeadAttention",
                mha["forward_speedup_vs_keras"], ">=", 1.2),
        _target("forward+backward speed-up vs keras.layers.MultiHeadAttention",
                mha["forward_backward_speedup_vs_keras"], ">=", 1.2),
        _target("forward FLOP rate / tf.matmul rate", mha["forward_fraction_of_matmul"], ">=", 0.7,
                "FLOPs of the 4 projections, Q·Kᵀ and weights·V only (softmax, bias adds and "
                "head reshapes are work but not counted); matmul: "
                f"{MATMUL_SIZE}×{MATMUL_SIZE} float32, timed in the same rounds"),
    ]
    chunk, dense = variants["chunked"], variants["full"]
    if chunk["peak_mib"] is not None:
        n = max(chunk["n"])
        ratio = chunk["peak_mib"][chunk["n"].index(n)] / dense["peak_mib"][dense["n"].index(n)]
        targets.append(_target(f"chunked / full peak memory at n={n}", ratio, "<=", 1 / 8))
    for name in ("window", "linear", "full"):
        rows = variants[name]
        keep = [i for i, n in enumerate(rows["n"]) if n >= slope_from] or list(range(len(rows["n"])))
        ns = [rows["n"][i] for i in keep]
        slope = cost.loglog_slope(ns, [rows["time_ms"][i] for i in keep])
        note = f"log-log fit of time over n = {ns}"
        if name == "full":
            targets.append({"name": "full time slope (for comparison)", "measured": slope,
                            "target": None, "passed": None, "note": note})
        else:
            targets.append(_target(f"{name} time slope", slope, "<=", 1.2, note))
    return targets


def _save_figures(out, variants, rnn):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import plots
    from .plots.cost import rnn_vs_attention_time, variant_costs

    plots.setup()
    for name, fig in [("variants.png", variant_costs(variants)),
                      ("rnn_vs_attention.png", rnn_vs_attention_time(rnn["n"], rnn["rnn_ms"], rnn["attention_ms"]))]:
        fig.savefig(out / name, bbox_inches="tight")
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m attnbook.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-results", help="results folder (default: bench-results)")
    parser.add_argument("--quick", action="store_true", help="shorter lengths and fewer repeats")
    parser.add_argument("--label", default=None, help="a note on the machine, kept in the provenance")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = functools.partial(print, flush=True)
    started, load_at_start = time.time(), os.getloadavg()[0]

    lengths = [512, 1024, 2048, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384]
    log("1/3 MiniMultiHeadAttention vs keras.layers.MultiHeadAttention (8, 512, 256, 8 heads)")
    mha = measure_mha(rounds=2 if args.quick else 4, log=log)
    log(f"  forward x{mha['forward_speedup_vs_keras']:.2f}, forward+backward "
        f"x{mha['forward_backward_speedup_vs_keras']:.2f} vs Keras; "
        f"{mha['forward_gflops']:.0f} GFLOP/s = {mha['forward_fraction_of_matmul']:.0%} of matmul "
        f"({mha['matmul_gflops']:.0f} GFLOP/s)")
    log(f"2/3 full / chunked / window / linear attention, n = {lengths} (heads=1, d=64)")
    variants = measure_variants(lengths, repeats=2 if args.quick else 3, log=log)
    log("3/3 GRU vs attention")
    rnn = measure_rnn_vs_attention([64, 128, 256, 512] if args.quick else [64, 128, 256, 512, 1024],
                                   **RNN_SETTINGS, log=log)

    targets = evaluate_targets(mha, variants, slope_from=1024 if args.quick else 2048)
    results = {
        "format": RESULTS_FORMAT, "provenance": provenance(args.label),
        "quick": args.quick, "seconds": round(time.time() - started, 1),
        "load_average_1min": {"start": load_at_start, "end": os.getloadavg()[0]},
        "settings": {"chunk_size": CHUNK_SIZE, "window": WINDOW, "rnn_vs_attention": RNN_SETTINGS},
        "targets": targets, "mha": mha, "variants": variants, "rnn_vs_attention": rnn,
    }
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    _save_figures(out, variants, rnn)
    log("targets:")
    for t in targets:
        verdict = {True: "PASS", False: "FAIL", None: "info"}[t["passed"]]
        log(f"  [{verdict}] {t['name']}: {t['measured']:.4g} (target {t['target']})")
    log(f"wrote {out / 'results.json'} and figures in {results['seconds']} s")
    return results


if __name__ == "__main__":
    main()
