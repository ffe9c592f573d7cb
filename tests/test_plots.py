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
import re
import warnings
from typing import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.colors import to_hex, to_rgb  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import attnbook.plots  # noqa: E402
from attnbook.plots import _theme, cost, figure_svg, flow, heatmaps, setup, wiring  # noqa: E402
from attnbook.plots import scaling as scaling_plots  # noqa: E402
from attnbook.scaling import measure_scaling  # noqa: E402
from book._ext.resolving import figures as figures_ext  # noqa: E402
from buildfiles import ROOT  # noqa: E402
from terms import term_problems  # noqa: E402


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
         ("无掩码", "有掩码", "查询位置", "键位置", "填充", "注意力权重")),
    Case(heatmaps.head_grid, lambda: dict(weights=_weights(4, 6, 6)), 5,
         ("头 1", "头 4", "查询位置", "键位置", "注意力权重")),
    Case(heatmaps.alignment_table, lambda: dict(weights=_weights(6, 20)), 2,
         ("对齐就是这张权重表", "解码器位置（查询）", "编码器位置（键、值）", "注意力权重")),
    Case(heatmaps.alignment_before_after,
         lambda: dict(untrained=_weights(6, 20), learned=np.eye(8)[::-1], inputs=np.arange(8)), 3,
         ("未经训练", "训练之后", "解码器位置（查询）", "输入位置", "0:0", "注意力权重")),
    Case(heatmaps.reversal_alignment,
         lambda: dict(weights=np.eye(8)[::-1], inputs=np.arange(8)), 2,
         ("学到的对齐", "输出位置", "输入位置", "0:0", "注意力权重")),
    Case(scaling_plots.scaling_curves, lambda: dict(result=measure_scaling(depths=(4, 16, 64))), 2,
         ("不缩放", "每头维度", "错误做法", "每头维度 $d_k$", "均匀分布")),
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
         ("序列长度", "前向时间（毫秒）", "峰值内存增长（MiB）")),
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


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.function.__name__)
def test_figure_text_uses_the_glossarys_terms(case):
    """The words drawn in a figure (titles, labels, legends, notes) follow the glossary."""
    fig = case.function(**case.arguments())
    try:
        problems = {text: term_problems(text) for text in _texts(fig) if term_problems(text)}
        assert not problems, problems
    finally:
        plt.close(fig)


def test_the_figure_terms_check_can_fail():
    fig, ax = plt.subplots()
    ax.set_xlabel("键位置（虚线后为补零）")
    try:
        assert [term_problems(t) for t in _texts(fig) if term_problems(t)] == [["补零（应写“填充”）"]]
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


# --- the SVG the book's pages inline (attnbook.plots.figure_svg, book/_ext/resolving/figures.py) ----


HEATMAP_CASES = [case for case in CASES if case.function.__module__ == heatmaps.__name__]
# Colours a figure may draw with besides the theme's: the outlined dashes over a heat map.
OVER_THE_MAP = {to_hex(_theme.OUTLINE_LINE), to_hex(_theme.OUTLINE_EDGE)}
CSS = (ROOT / "book" / "_static" / "figures.css").read_text(encoding="utf-8")
# The page backgrounds figures sit on: pydata-sphinx-theme 0.17's and the editor's boxes
# (book/_static/book.css), light and dark.
LIGHT_PAGES, DARK_PAGES = ("#ffffff", "#f7f4fe"), ("#14181e", "#221d33")


def _svg_of(case):
    fig = case.function(**case.arguments())
    try:
        return figure_svg(fig)
    finally:
        plt.close(fig)


def _style_colours(svg):
    styles = " ".join(re.findall(r'style="([^"]*)"', svg))
    return {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", styles)}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.function.__name__)
def test_figures_draw_only_in_theme_colours(case):
    """A fixed black, grey or white would vanish on one of the two themes."""
    svg = _svg_of(case)
    allowed = set(_theme.THEME_COLOURS) | (OVER_THE_MAP if case in HEATMAP_CASES else set())
    assert _style_colours(svg) - allowed == set()
    assert figures_ext.figure_metadata(svg)["colours"] == _theme.THEME_COLOURS


@pytest.mark.parametrize("case", HEATMAP_CASES, ids=lambda c: c.function.__name__)
def test_heatmap_data_reaches_the_page_exactly(case):
    """The tables the page shows on hover are the arrays drawn, value for value."""
    fig = case.function(**case.arguments())
    drawn = [image.get_array() for ax in fig.axes for image in ax.get_images()]
    svg = figure_svg(fig)
    plt.close(fig)
    inline, panels = figures_ext.inline_figure(svg, "替代文字", "fig7-", {})
    assert len(panels) == len(drawn) >= 1
    for panel, table in zip(panels, drawn):
        assert np.array_equal(np.asarray(panel["values"], dtype=table.dtype), table)
        assert re.search(f'<image [^>]*id="{panel["image"]}"', inline) and panel["image"].startswith("fig7-")
        assert len(panel["rows"].get("labels", table)) == table.shape[0]
        assert len(panel["cols"].get("labels", table[0])) == table.shape[1]


def test_heatmap_data_keeps_float32_weights_exact():
    weights = _weights(3, 5).astype(np.float32)
    fig = heatmaps.weights_heatmap(weights)
    panels = figures_ext.figure_metadata(figure_svg(fig))["heatmaps"]
    plt.close(fig)
    assert np.array_equal(np.float32(panels[0]["values"]), weights)
    assert (panels[0]["rows"]["name"], panels[0]["cols"]["name"]) == ("查询位置", "键位置")


def test_reversal_map_carries_position_and_digit_labels():
    fig = heatmaps.reversal_alignment(np.eye(3)[::-1], inputs=[7, 1, 4], outputs=[4, 1, 7])
    (panel,) = figures_ext.figure_metadata(figure_svg(fig))["heatmaps"]
    plt.close(fig)
    assert panel["cols"]["labels"] == ["0:7", "1:1", "2:4"]
    assert panel["rows"]["labels"] == ["0:4", "1:1", "2:7"]


def test_inlined_svg_is_page_ready():
    """Ids unique across figures, glyphs defined once, every colour themed, nothing leaking."""
    shared, pages = {}, []
    for i, case in enumerate(CASES[:4]):
        inline, _ = figures_ext.inline_figure(_svg_of(case), f"图 {i}", f"fig{i}-", shared)
        assert inline.startswith('<svg class="attnbook-svg"') and 'role="img"' in inline
        assert f'aria-label="图 {i}"' in inline and re.search(r'viewBox="[\d. ]+"', inline)
        fixed = inline
        for colour in OVER_THE_MAP:
            fixed = fixed.replace(colour, "")
        assert not re.search(r"<style|<metadata|xlink:|#[0-9a-fA-F]{6}\b", fixed)
        pages.append(inline)
    page = figures_ext.shared_definitions(shared) + "".join(pages)
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "duplicate ids in the page"
    targets = {a or b for a, b in re.findall(r'href="#([^"]+)"|url\(#([^)]+)\)', page)}
    assert targets and targets <= set(ids)
    assert "var(--fig-ink)" in page and "var(--fig-paper)" in page


def _css_block(selector):
    body = CSS.split(selector + " {", 1)[1].split("}", 1)[0]
    return dict(re.findall(r"--fig-([\w-]+):\s*([^;]+);", body))


def _contrast(a, b):
    """WCAG contrast ratio of two colours (tests/test_figures_browser.py measures pixels)."""
    def luminance(colour):
        c = np.array(to_rgb(colour))
        c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_css_gives_every_colour_role_a_light_and_a_dark_value():
    light, dark = _css_block(":root"), _css_block('html[data-theme="dark"]')
    assert set(light) == set(_theme.THEME_COLOURS.values())
    viridis = matplotlib.colormaps[_theme.CMAP]
    for i, (colour, shade) in enumerate(zip(_theme.ACCENTS, _theme.ACCENT_SHADES)):
        assert light[f"accent-{i}"] == colour
        assert dark[f"accent-{i}"] == to_hex(viridis(shade + _theme.DARK_SHIFT))
        # Lines and box edges: at least 3:1 against every page they sit on (WCAG 1.4.11).
        assert min(_contrast(colour, page) for page in LIGHT_PAGES) >= 3
        assert min(_contrast(dark[f"accent-{i}"], page) for page in DARK_PAGES) >= 3
    assert light["paper"] == "transparent"
    # Ink and muted follow the theme's text colours; without them, their light values.
    assert light["ink"] == f"var(--pst-color-text-base, {_theme.INK})"
    assert light["muted"] == f"var(--pst-color-text-muted, {_theme.MUTED})"
    # Lighter step by step in both themes, so the order of the steps reads in grey too.
    for values in (light, dark):
        grey = [_contrast(values[f"accent-{i}"], "#000000") for i in range(len(_theme.ACCENTS))]
        assert grey == sorted(grey)


def test_log_axes_label_ticks_as_plain_numbers():
    """Within one decade matplotlib labels minor ticks too: 20, 30, 60, never 2 × 10¹."""
    fig = cost.rnn_vs_attention_time([64, 128, 256], [16.0, 6.0, 65.0], [11.0, 3.2, 80.0])
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].yaxis.get_ticklabels(which="both") if t.get_text()]
    plt.close(fig)
    assert len(labels) > 3 and all(re.fullmatch(r"[\d.]+", t) for t in labels), labels
