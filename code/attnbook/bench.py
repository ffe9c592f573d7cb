"""成本账的基准测试：``python -m attnbook.bench [--out DIR] [--quick]``。

命令行只做三件事：用 :mod:`attnbook.measurements` 的函数在同一次运行里、同一台机器上
并排测量，按 :func:`evaluate_targets` 的各项目标判定，再把结果写入 ``DIR/results.json``
（每个目标、它的实测值与是否达标），把图写入 ``DIR/*.png``。
"""

import argparse
import functools
import json
import os
import platform
import sys
import time
from pathlib import Path

import keras

from . import cost
from ._tf import tf
from .measurements import (CHUNK_SIZE, MATMUL_SIZE, WINDOW, measure_mha, measure_rnn_vs_attention,
                           measure_variants)

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
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = functools.partial(print, flush=True)
    started = time.time()

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
    rnn = measure_rnn_vs_attention([64, 128, 256, 512] if args.quick else [64, 128, 256, 512, 1024], log=log)

    targets = evaluate_targets(mha, variants, slope_from=1024 if args.quick else 2048)
    results = {
        "quick": args.quick, "seconds": round(time.time() - started, 1),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "load_average_1min_at_end": os.getloadavg()[0],
                    "python": sys.version.split()[0],
                    "tensorflow": tf.__version__, "keras": keras.__version__},
        "settings": {"chunk_size": CHUNK_SIZE, "window": WINDOW},
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
