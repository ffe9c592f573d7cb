"""成本账的基准测试：``python -m attnbook.bench [--out DIR] [--quick] [--label TEXT]``。

命令行只做三件事：用 :mod:`attnbook.measurements` 的函数在同一次运行里、同一台机器上
并排测量，按 :func:`evaluate_targets` 的各项目标判定，再把结果写入 ``DIR/results.json``
（每个目标、它的实测值与是否达标），把图写入 ``DIR/*.png``。结果文件带着它的出处
（:func:`provenance`：设备、驱动、核数、TensorFlow 版本、代码的提交与日期），可以提交到
``book/data/bench/``，成本账一页把它的数与本次构建的数分开并列。
"""

import argparse
import contextlib
import datetime
import functools
import html
import json
import os
import platform
import re
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
        一个字典，各项是：

        - ``device``：设备的种类 ``kind`` 与型号 ``model``。有 GPU 时是第一块 GPU，
          种类为 GPU 或 TPU；否则是 CPU，型号从 ``/proc/cpuinfo`` 读出。
        - ``driver``：``nvidia-smi`` 报告的驱动版本；没有 GPU 时为 ``None``。
        - ``cpu_count``：逻辑核数；``tensorflow``、``keras``、``python``、``platform``：版本与系统。
        - ``commit``：包源码所在 git 检出的提交 ``sha`` 与 ``dirty``，后者说明包的源码有没有
          未提交的改动；不在检出里时为 ``None``。
        - ``date``：UTC 时间，ISO 8601 格式；``label``：上面的说明文字。
    """
    kind, model = _device()
    driver = _run("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader") if kind == "GPU" else None
    return {"device": {"kind": kind, "model": model}, "driver": driver.splitlines()[0].strip() if driver else None,
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
    with contextlib.suppress(OSError):
        for line in Path(cpuinfo).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")) and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def _run(*command, cwd=None):
    """The stripped stdout of ``command``, or None when it cannot run or fails."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _commit(source=Path(__file__).resolve().parent):
    """``{"sha", "dirty"}`` of the git checkout holding the package source, or None."""
    sha = _run("git", "rev-parse", "HEAD", cwd=source)
    if not sha:
        return None
    changes = _run("git", "status", "--porcelain", "--untracked-files=no", "--", ".", cwd=source)
    return {"sha": sha, "dirty": bool(changes)}


TIMING_KEYS = ("n", "rnn_ms", "attention_ms", "rnn_train_ms", "attention_train_ms")
PROVENANCE_KEYS = ("device", "driver", "cpu_count", "tensorflow", "keras", "python", "platform", "commit",
                   "date", "label")


def check_results(results):
    """检查一个结果文件的内容带着完整的出处，返回 ``results`` 本身。

    Raises:
        ValueError: 缺 ``provenance`` 或其中的某一项，设备的种类不是 GPU、TPU、CPU 之一，
            或 GPU 上没有记下驱动。
    """
    prov = results.get("provenance")
    if not isinstance(prov, dict):
        raise ValueError("结果文件没有 provenance（出处）：请用新版的 python -m attnbook.bench 重新生成")
    missing = [key for key in PROVENANCE_KEYS if key not in prov]
    kind = (prov.get("device") or {}).get("kind")
    if missing or kind not in (*PARALLEL_KINDS, "CPU") or not (prov["device"].get("model")):
        raise ValueError(f"出处不完整：缺 {missing}，设备 {prov.get('device')!r}")
    if kind == "GPU" and not prov["driver"]:
        raise ValueError("GPU 上的结果文件没有记下驱动版本")
    commit = prov["commit"]
    if commit is not None and not (isinstance(commit.get("sha"), str) and isinstance(commit.get("dirty"), bool)):
        raise ValueError(f"提交应为 {{sha, dirty}} 或 None，得到 {commit!r}")
    datetime.datetime.fromisoformat(prov["date"])
    rnn = results.get("rnn_vs_attention", {})
    if not all(key in rnn for key in TIMING_KEYS) or "batch" not in results.get("settings", {}).get(
            "rnn_vs_attention", {}):
        raise ValueError("结果文件没有 GRU 与注意力的计时（rnn_vs_attention 与它的批次大小）")
    return results


def load_results(folder):
    """``folder`` 里的每个结果文件（``*.json``，按文件名排序），经 :func:`check_results` 检查。

    Returns:
        ``[(文件名, 内容)]``；文件夹不存在时为空列表。
    """
    return [(path.name, check_results(json.loads(path.read_text(encoding="utf-8"))))
            for path in sorted(Path(folder).glob("*.json"))]


def timing_summary(rnn, batch):
    """由 GRU 与注意力的计时（:func:`attnbook.measurements.measure_rnn_vs_attention` 的结果）
    算出成本账比较的数：前向与训练步的时间、训练吞吐（每秒处理的位置数）、吞吐与时间在
    相邻长度之间的双对数斜率，以及 GRU 用时是注意力的几倍。键名与成本账一页记下的名字相同。
    """
    ns = list(rnn["n"])
    out = {"timing_lengths": ns, "timing_segments": [f"{a}→{b}" for a, b in zip(ns, ns[1:])], "batch": batch}
    for kind, label in (("rnn", "gru"), ("attention", "attention")):
        out[f"forward_ms_{label}"] = list(rnn[f"{kind}_ms"])
        out[f"train_ms_{label}"] = list(rnn[f"{kind}_train_ms"])
        out[f"train_throughput_{label}"] = [batch * n / (ms / 1e3) for n, ms in zip(ns, rnn[f"{kind}_train_ms"])]
        out[f"train_throughput_segment_slopes_{label}"] = cost.segment_slopes(ns, out[f"train_throughput_{label}"])
    out["train_time_segment_slopes_attention"] = cost.segment_slopes(ns, out["train_ms_attention"])
    for step in ("forward", "train"):
        out[f"{step}_speedup"] = [g / a for g, a in zip(out[f"{step}_ms_gru"], out[f"{step}_ms_attention"])]
    return out


def file_values(files):
    """每个结果文件的出处与计时，按名字排成列表，每个文件一项：论断核对表读的 ``bench_<名字>``。

    Args:
        files: :func:`load_results` 的结果，``[(文件名, 内容)]``。

    Returns:
        ``{名字: [每个文件的值]}``：``file``、``label``（:func:`provenance_label`）、
        ``device_kind``、``device``，以及 :func:`timing_summary` 的每一项。
    """
    provs = [results["provenance"] for _, results in files]
    out = {"file": [name for name, _ in files], "label": [provenance_label(p) for p in provs],
           "device_kind": [p["device"]["kind"] for p in provs],
           "device": [f"{p['device']['kind']}（{p['device']['model']}）" for p in provs]}
    summaries = [timing_summary(r["rnn_vs_attention"], r["settings"]["rnn_vs_attention"]["batch"]) for _, r in files]
    # an empty folder still names every list: the keys of a summary of two placeholder points
    keys = summaries[0] if summaries else timing_summary({k: [1, 2] for k in TIMING_KEYS}, 1)
    return out | {key: [summary[key] for summary in summaries] for key in keys}


def commit_text(prov):
    """出处里的提交：前 12 位，包的源码有未提交的改动时注明；不在 git 检出里时也说明。"""
    commit = prov["commit"]
    if commit is None:
        return "不在 git 检出里"
    return commit["sha"][:12] + ("（有未提交的改动）" if commit["dirty"] else "")


def provenance_label(prov):
    """出处的一行说明：设备、驱动、核数、TensorFlow 版本、提交与日期（UTC）。"""
    return (f"{prov['device']['kind']}：{prov['device']['model']}，驱动 {prov['driver'] or '无'}，"
            f"{prov['cpu_count']} 个逻辑核，TensorFlow {prov['tensorflow']}，提交 {commit_text(prov)}，"
            f"{prov['date'][:10]}")


_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.()_/+\-]*")


_UNBROKEN = re.compile(r"[A-Za-z0-9]{10,}")


def _escaped(text):
    """``text`` escaped for HTML; a run of 10 or more letters and digits (a commit) gets a
    ``<wbr>`` every 6 characters, so that a phone's narrow column breaks it there rather than
    inside a number."""
    return _UNBROKEN.sub(lambda m: "<wbr>".join(m.group()[i:i + 6] for i in range(0, len(m.group()), 6)),
                         html.escape(text))


def _latin_marked(text):
    """``text`` escaped for HTML (:func:`_escaped`), each run with a Latin letter in
    ``<span lang="en">`` (the page is Chinese: a screen reader then reads those runs as English)."""
    text, out, last = str(text), [], 0
    for match in _LATIN.finditer(text):
        if re.search("[A-Za-z]", match.group()):
            out += [_escaped(text[last:match.start()]), f'<span lang="en">{_escaped(match.group())}</span>']
            last = match.end()
    return "".join(out) + _escaped(text[last:])


class Table:
    """一张带标题、表头与行首的表：笔记本与网页显示它的 HTML，纯文本里每行一列。

    Args:
        caption: 表的标题。
        header: 表头，第一项是行首那一列的名字。
        rows: 每行一个列表，第一项是行首，其余是各列的文字。
    """

    def __init__(self, caption, header, rows):
        self.caption, self.header, self.rows = caption, list(header), [list(row) for row in rows]

    def _repr_html_(self):
        esc = _latin_marked
        head = "".join(f'<th scope="col">{esc(h)}</th>' for h in self.header)
        body = "".join(f'<tr><th scope="row">{esc(row[0])}</th>' + "".join(f"<td>{esc(c)}</td>" for c in row[1:])
                       + "</tr>" for row in self.rows)
        return (f'<table class="bench-table"><caption>{esc(self.caption)}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def __repr__(self):
        return "\n".join([self.caption] + ["｜".join(row) for row in [self.header, *self.rows]])


# --- targets and the command line ----------------------------------------------------


def _target(name, measured, op, goal, note=""):
    ok = measured >= goal if op == ">=" else measured <= goal
    return {"name": name, "measured": float(measured), "target": f"{op} {goal}",
            "passed": bool(ok), "note": note}


def evaluate_targets(mha, variants, slope_from=2048):
    """基准测试的各项目标，返回 ``{name, measured, target, passed, note}`` 的列表。

    ``mha`` 与 ``variants`` 是 :func:`attnbook.measurements.measure_mha` 与
    :func:`attnbook.measurements.measure_variants` 的结果；时间的对数斜率只用
    ``n >= slope_from`` 的点拟合（没有这样的点时用全部的点）。滑动窗口与线性注意力的
    时间斜率只与完整注意力的比较（要更小），不对一个绝对的门槛。
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
    slopes, notes = {}, {}
    for name in ("full", "window", "linear"):
        rows = variants[name]
        keep = [i for i, n in enumerate(rows["n"]) if n >= slope_from] or list(range(len(rows["n"])))
        ns = [rows["n"][i] for i in keep]
        slopes[name] = cost.loglog_slope(ns, [rows["time_ms"][i] for i in keep])
        notes[name] = f"log-log fit of time over n = {ns}"
    targets.append({"name": "full time slope (for comparison)", "measured": slopes["full"],
                    "target": None, "passed": None, "note": notes["full"]})
    for name in ("window", "linear"):  # time slopes are compared with each other, not with a bar
        targets.append({"name": f"{name} time slope", "measured": slopes[name],
                        "target": f"< full ({slopes['full']:.2f})", "passed": bool(slopes[name] < slopes["full"]),
                        "note": notes[name]})
    return targets


def _save_figures(out, variants, rnn):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import plots

    plots.setup()
    for name, fig in [("variants.png", plots.variant_costs(variants)), ("rnn_vs_attention.png",
                      plots.rnn_vs_attention_time(rnn["n"], rnn["rnn_ms"], rnn["attention_ms"]))]:
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
