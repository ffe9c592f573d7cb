"""Every figure function of attnbook.plots: right axes, Chinese labels, clean glyphs.

To add a figure, add one ``Case`` to ``CASES``: the function, a callable that returns
its arguments, the number of axes (colour bars count) and texts that must appear.
``test_every_figure_function_has_a_case`` fails for a public function without one.
"""

import dataclasses
import importlib
import inspect
import logging
import pkgutil
import warnings
from typing import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import attnbook.plots  # noqa: E402
from attnbook.plots import cost, flow, heatmaps, setup, wiring  # noqa: E402
from attnbook.plots import scaling as scaling_plots  # noqa: E402
from attnbook.scaling import measure_scaling  # noqa: E402


def _weights(*shape, seed=0):
    """Made-up attention weights: positive, rows summing to 1."""
    w = np.random.default_rng(seed).random(shape)
    return w / w.sum(-1, keepdims=True)


@dataclasses.dataclass
class Case:
    function: Callable
    arguments: Callable[[], dict]  # called lazily, so collection stays fast
    n_axes: int  # colour bars are axes too
    texts: tuple  # each must be part of some text of the figure


CASES = [
    Case(flow.signal_flow, dict, 1, ("输入 X", "查询", "键", "值", "点积", "缩放", "加权求和")),
    Case(heatmaps.weights_heatmap, lambda: dict(weights=_weights(8, 8)), 2,
         ("查询位置", "键位置", "注意力权重")),
    Case(heatmaps.mask_comparison,
         lambda: dict(unmasked=_weights(8, 8), masked=_weights(8, 8, seed=1), length=5), 3,
         ("无掩码", "有掩码", "查询位置", "键位置", "补零", "注意力权重")),
    Case(heatmaps.head_grid, lambda: dict(weights=_weights(4, 6, 6)), 5,
         ("头 1", "头 4", "查询位置", "键位置", "注意力权重")),
    Case(heatmaps.alignment_table, lambda: dict(weights=_weights(6, 20)), 2,
         ("对齐就是这张权重表", "解码器位置（查询）", "编码器位置（键、值）", "注意力权重")),
    Case(heatmaps.reversal_alignment,
         lambda: dict(weights=np.eye(8)[::-1], inputs=np.arange(8)), 2,
         ("学到的对齐", "输出位置", "输入位置", "0:0", "注意力权重")),
    Case(scaling_plots.scaling_curves, lambda: dict(result=measure_scaling(depths=(4, 16, 64))), 2,
         ("不缩放", "每头维度", "常见错误", "每头维度 $d_k$", "均匀分布")),
    Case(wiring.attention_wiring, dict, 2,
         ("自注意力", "交叉注意力", "解码器状态", "编码器输出", "只算一次", "(2, 6, 20)", "(2, 10, 10)")),
    Case(cost.rnn_vs_attention_time,
         lambda: dict(lengths=[64, 128, 256], rnn_ms=[1.0, 2.0, 4.0],
                      attention_ms=[0.5, 0.6, 0.9]), 1,
         ("序列长度", "前向时间（毫秒）")),
    Case(cost.rnn_vs_attention_time,
         lambda: dict(lengths=[64, 128, 256], rnn_ms=[1.0, 2.0, 4.0], attention_ms=[0.5, 0.6, 0.9],
                      rnn_train_ms=[3.0, 6.0, 12.0], attention_train_ms=[1.0, 1.5, 3.0]), 2,
         ("序列长度", "前向时间（毫秒）", "训练步时间（毫秒）")),
    Case(cost.variant_costs,
         lambda: dict(results={
             name: {"n": [64, 128], "time_ms": [1.0, 2.0], "peak_mib": [3.0, 9.0]}
             for name in ("full", "chunked", "window", "linear")}), 2,
         ("序列长度", "前向时间（毫秒）", "峰值内存（MiB）")),
]


@pytest.fixture(autouse=True, scope="module")
def style():
    setup()
    yield
    plt.close("all")


def _texts(fig):
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


_BOLD = {"semibold", "demibold", "demi", "bold", "heavy", "extra bold", "black"}


def _is_bold(weight):
    return weight in _BOLD or (isinstance(weight, (int, float)) and weight >= 600)


def draw_cleanly(fig, caplog):
    """Draw ``fig``; fail on any warning (e.g. a missing glyph) or a matplotlib log
    warning (e.g. findfont: bold is asked for but only regular CJK exists)."""
    bold = [t.get_text() for t in fig.findobj(Text)
            if t.get_text() and _is_bold(t.get_fontweight())]
    assert not bold, f"bold text (only regular CJK fonts exist): {bold}"
    # findfont warns once per font request and then caches it; start afresh.
    font_manager.fontManager._findfont_cached.cache_clear()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="matplotlib"), warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()
    problems = [r.getMessage() for r in caplog.records if r.name.startswith("matplotlib")]
    assert not problems, problems


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.function.__name__)
def test_figure(case, caplog):
    fig = case.function(**case.arguments())
    try:
        assert isinstance(fig, Figure)
        assert len(fig.axes) == case.n_axes
        texts = _texts(fig)
        missing = [want for want in case.texts if not any(want in t for t in texts)]
        assert not missing, f"missing texts {missing} among {texts}"
        draw_cleanly(fig, caplog)
    finally:
        plt.close(fig)


def _public_figure_functions():
    for info in pkgutil.iter_modules(attnbook.plots.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"attnbook.plots.{info.name}")
        for name, obj in vars(module).items():
            ours = inspect.isfunction(obj) and obj.__module__ == module.__name__
            if ours and not name.startswith("_"):
                yield obj


def test_every_figure_function_has_a_case():
    covered = {case.function for case in CASES}
    missing = [f"{f.__module__}.{f.__name__}" for f in _public_figure_functions()
               if f not in covered]
    assert not missing, f"add a Case to tests/test_plots.py for {missing}"


@pytest.mark.parametrize(
    "label, kwargs",
    [
        ("查询位置", dict(fontweight="bold")),
        ("query", dict(fontfamily="No Such Font")),  # caught through the findfont log
        ("查询 \N{TIBETAN SYLLABLE OM}", {}),
    ],
    ids=["bold", "unknown-font", "missing-glyph"],
)
def test_the_checker_catches_font_problems(label, kwargs, caplog):
    fig, ax = plt.subplots()
    ax.set_title(label, **kwargs)
    try:
        with pytest.raises((AssertionError, UserWarning)):
            draw_cleanly(fig, caplog)
    finally:
        plt.close(fig)
