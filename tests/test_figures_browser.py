"""The book's figures in Chromium: at home on both themes, and heat maps read exactly.

Every figure is an inline SVG (book/_ext/resolving/figures.py). For each page with figures, in the
light and the dark theme as the system asks for them, each figure is photographed three
times: as shown, with the SVG hidden (what lies behind it) and with its labels hidden
(what lies behind each label). The figure's border must be the page's own background,
pixel for pixel, and every label's colour must reach a contrast of 4.5:1 against what
lies behind it. Then the reader picks the other theme with the theme switch (no reload):
every figure must look as it does when the system asks for that theme.

The heat maps (book/_ext/static/heatmap.js) are read by pointer, by touch on a phone and by
keyboard, and the number shown is checked three ways: against the weights the page
printed, against the data the build embedded (which tests/test_plots.py proves equal to
the drawn arrays), and against the colour of the pixel under the pointer.

Screenshots go to test-artifacts/browser/figures/, the measured contrasts to
test-artifacts/browser/figures/contrast-*.json.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from matplotlib import colormaps
from PIL import Image

from browsing import ARTIFACTS, fmt, screenshot_problems
from buildfiles import HTML, ATTENTION, soup

pytestmark = pytest.mark.browser

MECHANISM = "book/ch04/mechanism"
SHOTS = ARTIFACTS / "figures"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_LABEL_CONTRAST = 4.5
RING = 4  # px of the figure's border that must be the page's background
PIXEL_TOLERANCE = 8  # per channel, 0-255
PICKED_TOLERANCE = 1.0  # mean per channel: a picked theme draws a figure as the system's does
THEMES = {  # name: (the system's colour scheme, whether the reader clicks the theme switch)
    "light": ("light", False),
    "dark": ("dark", False),
    "dark-picked-on-light-system": ("light", True),
    "light-picked-on-dark-system": ("dark", True),
}


def figure_pages() -> list[str]:
    if not (HTML / "book").is_dir():
        return ["<no build in _build/html>"]
    pages = [p.relative_to(HTML).as_posix() for p in sorted((HTML / "book").rglob("*.html"))
             if 'class="attnbook-fig' in p.read_text(encoding="utf-8")]
    return pages or ["<no page with an inline figure in the build>"]


# --- opening a page in a theme ---------------------------------------------------------


def open_in_theme(watch, server, page, theme, **options):
    scheme, picked = THEMES[theme]
    w = watch(viewport=options.pop("viewport", DESKTOP), color_scheme=scheme, **options)
    w.open(server.url + page)
    if picked:
        pick(w, theme.split("-")[0])
    w.page.wait_for_function("(t) => document.documentElement.dataset.theme === t", arg=theme.split("-")[0])
    return w


def pick(w, theme):
    """Click the theme switch, as a reader does, to ``theme`` (the other one)."""
    w.page.click(".theme-switch-button >> visible=true")
    # Leave the switch: its tooltip would otherwise float over the figures.
    w.page.evaluate("() => document.activeElement.blur()")
    w.page.mouse.move(0, DESKTOP["height"] - 1)
    w.page.wait_for_function("(t) => document.documentElement.dataset.theme === t", arg=theme)


def image(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour given as 0-255 channels."""
    c = np.asarray(rgb, dtype=float)[:3] / 255
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])


def contrast(a, b) -> float:
    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def ring(pixels: np.ndarray) -> np.ndarray:
    """The figure's border, RING pixels wide, one pixel in: an element's screenshot is
    rounded out to whole pixels, so its outermost rows may show the page around it."""
    inner = pixels[1:-1, 1:-1]
    return np.concatenate([inner[:RING].reshape(-1, 3), inner[-RING:].reshape(-1, 3),
                           inner[:, :RING].reshape(-1, 3), inner[:, -RING:].reshape(-1, 3)])


# Labels are the <g> elements whose glyphs are <use> elements (markers carry x and y).
_LABELS = """[...box.querySelectorAll('svg.attnbook-svg g')].filter((g) =>
    [...g.children].some((c) => c.tagName === 'use' && !c.hasAttribute('x')))"""
LABELS_JS = f"""(box) => {{
    const f = box.getBoundingClientRect();
    return {_LABELS}.map((g) => {{ const r = g.getBoundingClientRect();
        return {{x: r.left - f.left, y: r.top - f.top, w: r.width, h: r.height,
                 fill: getComputedStyle(g).fill}}; }});
}}"""
HIDE_JS = f"""(box, [what, hidden]) => {{
    const targets = what === 'svg' ? [box.querySelector('svg.attnbook-svg')] : {_LABELS};
    targets.forEach((el) => {{ el.style.visibility = hidden ? 'hidden' : ''; }});
}}"""


def photograph(box, hide=None) -> np.ndarray:
    """The figure as shown, or with its SVG (``"svg"``) or its labels (``"labels"``) hidden."""
    if hide:
        box.evaluate(HIDE_JS, [hide, True])
    try:
        return image(box.screenshot())
    finally:
        if hide:
            box.evaluate(HIDE_JS, [hide, False])


def aligned_difference(a, b, reach=1) -> float:
    """Mean absolute difference of two photographs of one figure, at their best alignment
    within ``reach`` pixels: an element at a fractional page offset (4709.28 in one page,
    4774.56 in the other) is cropped up to a pixel apart, its pixels otherwise the same."""
    h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    a, b = a[:h, :w], b[:h, :w]
    best = np.inf
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            one = a[max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)]
            two = b[max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
            best = min(best, float(np.abs(one - two).mean()))
    return best


def test_aligned_difference_forgives_a_pixel_of_cropping_but_not_a_change():
    rng = np.random.default_rng(0)
    picture = rng.integers(0, 255, (40, 50, 3)).astype(float)
    assert aligned_difference(picture[1:], picture[:-1]) == 0
    changed = picture.copy()
    changed[10:30, 10:30] = 0
    assert aligned_difference(picture, changed) > 1


def measure_figure(box) -> dict:
    """Photograph one figure as shown, without its SVG, without its labels; compare."""
    box.scroll_into_view_if_needed()
    labels = box.evaluate(LABELS_JS)
    shown, behind, unlabelled = photograph(box), photograph(box, "svg"), photograph(box, "labels")
    same = np.abs(ring(shown) - ring(behind)).max(axis=1) <= PIXEL_TOLERANCE
    contrasts = []
    for label in labels:
        x0, y0 = max(0, int(label["x"])), max(0, int(label["y"]))
        x1, y1 = int(np.ceil(label["x"] + label["w"])), int(np.ceil(label["y"] + label["h"]))
        patch = unlabelled[y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)].reshape(-1, 3)
        fill = [float(v) for v in re.findall(r"[\d.]+", label["fill"])[:3]]
        contrasts.append(contrast(fill, np.median(patch, axis=0)))
    return {"border_same_as_page": float(same.mean()),
            "border_luminance": luminance(np.median(ring(shown), axis=0)),
            "page_luminance": luminance(np.median(ring(behind), axis=0)),
            "labels": len(labels), "min_label_contrast": round(min(contrasts), 2) if contrasts else None,
            "size": list(shown.shape[:2]), "_shown": shown}


def check_figures(w, page, theme, failures) -> dict:
    """Measure every figure of the page as shown in ``theme``; note what fails; return
    each figure's photograph as shown, by name."""
    boxes = w.page.locator(".attnbook-fig").all()
    figures = soup(page).select("figure")
    assert boxes and len(boxes) == len(figures), f"{page}: {len(boxes)} inline figures, {len(figures)} <figure>s"
    report, photos = {}, {}
    for i, box in enumerate(boxes):
        name = box.evaluate("(b) => b.closest('figure') ? b.closest('figure').id : ''") or f"figure-{i}"
        m = measure_figure(box)
        photos[name] = m.pop("_shown")
        Image.fromarray(photos[name].astype(np.uint8)).save(SHOTS / f"{stem(page)}-{name}-{theme}.png")
        report[name] = m
        if m["border_same_as_page"] < 0.98:
            failures.append(f"{theme}, {name}: only {m['border_same_as_page']:.1%} of its border is the page's background")
        if theme.startswith("dark") and m["border_luminance"] > 0.1:
            failures.append(f"{theme}, {name}: a light box on a dark page (border luminance {m['border_luminance']:.2f})")
        if m["labels"] == 0 or m["min_label_contrast"] < MIN_LABEL_CONTRAST:
            failures.append(f"{theme}, {name}: {m['labels']} labels, lowest contrast {m['min_label_contrast']}")
    (SHOTS / f"contrast-{stem(page)}-{theme}.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return photos


def stem(page: str) -> str:
    return page.replace("/", "-").removesuffix(".html")


@pytest.mark.parametrize("page", figure_pages())
def test_figures_take_the_page_background_and_keep_labels_legible(page, server, watch):
    """Measured in the light and the dark theme as the system asks for them; a theme the
    reader picks on the other system must then show every figure as that one does."""
    if page.startswith("<"):
        pytest.fail(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    failures, measured, picked = [], {}, {}
    for system in ("light", "dark"):
        w = open_in_theme(watch, server, page, system)
        measured[system] = check_figures(w, page, system, failures)
        other = "dark" if system == "light" else "light"
        pick(w, other)
        picked[other] = {name: photograph(box) for name, box in
                         zip(measured[system], w.page.locator(".attnbook-fig").all())}
        if w.problems():
            failures.append(f"{system}: console/page errors:{fmt(w.problems())}")
    for theme, photos in picked.items():
        for name, photo in photos.items():
            Image.fromarray(photo.astype(np.uint8)).save(SHOTS / f"{stem(page)}-{name}-{theme}-picked.png")
            differ = aligned_difference(photo, measured[theme][name])
            if differ > PICKED_TOLERANCE:
                failures.append(f"{name}: {theme} picked on the other system differs from the system's {theme} "
                                f"by {differ:.2f} per channel")
    assert not failures, f"{page}:" + fmt(failures)


# --- heat maps: the exact weight of a cell ----------------------------------------------


CELL_JS = """(box, [p, r, c, scroll]) => {
    const data = JSON.parse(box.querySelector('script.attnbook-heatmap-data').textContent);
    const img = box.querySelector('svg').getElementById(data[p].image);
    if (scroll) img.scrollIntoView({block: 'center'});
    const b = img.getBoundingClientRect(), f = box.getBoundingClientRect();
    const rows = data[p].values.length, cols = data[p].values[0].length;
    const x = b.left + (c + 0.5) * b.width / cols, y = b.top + (r + 0.5) * b.height / rows;
    return {x, y, fx: x - f.left, fy: y - f.top, panel: data[p]};
}"""
TIP_JS = """(box) => { const tip = box.querySelector('.attnbook-heatmap-tip');
    return tip && !tip.hidden ? {text: tip.textContent, rect: tip.getBoundingClientRect().toJSON()} : null; }"""


def heatmap(w, figure_id):
    box = w.page.locator(f"#{figure_id} .attnbook-heatmap")
    assert box.count() == 1, f"#{figure_id} has no readable heat map"
    return box


def shown_weight(text: str) -> float:
    match = re.search(r"权重 (\S+)", text)
    assert match, f"no weight in {text!r}"
    return float(match.group(1))


def point_at(w, box, p, r, c, how="hover"):
    """Point at cell (r, c) of panel p; return what the tooltip says and the cell's data."""
    cell = box.evaluate(CELL_JS, [p, r, c, True])
    pixel = image(box.screenshot())[int(cell["fy"]), int(cell["fx"])]
    cell = box.evaluate(CELL_JS, [p, r, c, False])  # the screenshot may have scrolled
    if how == "tap":
        w.page.touchscreen.tap(cell["x"], cell["y"])
    else:
        w.page.mouse.move(cell["x"], cell["y"])
    tip = box.evaluate(TIP_JS)
    assert tip is not None, f"no tooltip at panel {p}, cell ({r}, {c})"
    value = cell["panel"]["values"][r][c]
    shown = shown_weight(tip["text"])
    assert shown == value, f"shown {shown}, embedded {value}"
    colour = np.asarray(colormaps["viridis"](value / cell["panel"]["vmax"])[:3]) * 255
    assert np.abs(pixel - colour).max() <= PIXEL_TOLERANCE, \
        f"cell ({r}, {c}) is drawn {pixel}, but weight {value} is colour {colour.round()}"
    return tip, value


def printed(page: str, pattern: str) -> re.Match:
    for pre in soup(page).select(".cell_output pre"):
        if match := re.search(pattern, pre.get_text()):
            return match
    pytest.fail(f"{page} prints nothing that matches {pattern!r}")


def test_walkthrough_map_shows_the_weights_the_page_printed(server, watch):
    """The page's cell prints the first query's 8 weights to two decimals; hovering over
    row 0 shows each of them, exactly, at the right place and in the right colour."""
    row = [float(v) for v in printed(MECHANISM, r"^\[([\d. ]+)\] 1\.0$").group(1).split()]
    assert len(row) == 8
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{MECHANISM}.html")
    box = heatmap(w, "fig-walkthrough-weights")
    for key, expected in enumerate(row):
        tip, value = point_at(w, box, 0, 0, key)
        assert abs(value - expected) <= 0.005 + 1e-9, f"key {key}: shown {value}, printed {expected}"
        assert tip["text"].splitlines()[:2] == ["查询位置 0", f"键位置 {key}"], tip["text"]
    w.page.mouse.move(1, 1)
    assert box.evaluate(TIP_JS) is None, "the tooltip stays after the pointer left"
    assert not w.problems(), w.problems()


def test_cross_attention_map_names_decoder_and_encoder_positions(server, watch):
    sums = [float(v) for v in printed(ATTENTION, r"每行的总和： \[([\d. ]+)\]").group(1).split()]
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{ATTENTION}.html")
    box = heatmap(w, "fig-cross-table")
    tip, _ = point_at(w, box, 0, 2, 13)
    assert tip["text"].splitlines()[:3] == ["未经训练：还看不出对齐", "解码器位置（查询） 2", "编码器位置（键、值） 13"], tip["text"]
    table = box.evaluate("(b) => JSON.parse(b.querySelector('script.attnbook-heatmap-data').textContent)")
    assert np.asarray(table[0]["values"]).shape == (6, 20)
    np.testing.assert_allclose(np.asarray(table[0]["values"]).sum(axis=1), sums, atol=5e-4)


def test_reversal_map_names_positions_and_digits(server, watch):
    """The page prints the first test sequence and the prediction; the map's labels match."""
    match = printed(MECHANISM, r"第一个测试序列： \[([\d ]+)\] → \[([\d ]+)\]")
    inputs, outputs = ([int(v) for v in group.split()] for group in match.groups())
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{MECHANISM}.html")
    box = heatmap(w, "fig-reversal-alignment")
    n = len(inputs)
    for out in (0, 2, n - 1):
        tip, value = point_at(w, box, 0, out, n - 1 - out)
        assert tip["text"].splitlines()[:2] == [f"输出位置：数字（查询） {out}:{outputs[out]}",
                                                f"输入位置：数字（键、值） {n - 1 - out}:{inputs[n - 1 - out]}"]
        assert value > 0.5, "the learned alignment reads the mirrored position"


def test_mask_comparison_shows_exact_zero_behind_the_mask(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{MECHANISM}.html")
    box = heatmap(w, "fig-mask-comparison")
    tip, value = point_at(w, box, 1, 0, 6)
    assert value == 0 and tip["text"].splitlines()[0] == "有掩码" and "权重 0" in tip["text"]
    _, unmasked = point_at(w, box, 0, 0, 6)
    assert unmasked > 0


def test_heatmaps_read_by_keyboard_one_tab_stop_each(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{MECHANISM}.html")
    stops = w.page.evaluate("""() => [...document.querySelectorAll('.attnbook-heatmap')].map((b) => ({
        tab: b.tabIndex, inner: b.querySelectorAll('a, button, input, [tabindex]').length,
        role: b.getAttribute('role'), live: b.querySelector('[aria-live]') !== null}))""")
    assert len(stops) == 4 and all(s == {"tab": 0, "inner": 0, "role": "application", "live": True}
                                   for s in stops), stops

    box = heatmap(w, "fig-walkthrough-weights")
    live = box.locator("[aria-live]")
    box.focus()
    assert box.get_attribute("data-cell") == "0,0,0" and "查询位置 0，键位置 0" in live.text_content()
    for key in ["ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight", "ArrowRight"]:
        w.page.keyboard.press(key)
    table = box.evaluate("(b) => JSON.parse(b.querySelector('script.attnbook-heatmap-data').textContent)")
    said = live.text_content()
    assert box.get_attribute("data-cell") == "0,2,3" and said.startswith("查询位置 2，键位置 3，"), said
    assert shown_weight(said) == table[0]["values"][2][3]
    w.page.keyboard.press("Escape")
    assert box.evaluate(TIP_JS) is None

    grid = heatmap(w, "fig-head-grid")  # the right arrow goes on from head 1 into head 2
    grid.focus()
    for _ in range(10):
        w.page.keyboard.press("ArrowRight")
    said = grid.locator("[aria-live]").text_content()
    assert grid.get_attribute("data-cell") == "1,0,0" and said.startswith("头 2，查询位置 0，键位置 0，"), said
    assert not w.problems(), w.problems()


def test_heatmap_tap_on_a_phone(server, watch):
    w = watch(viewport=PHONE, has_touch=True, is_mobile=True)
    w.open(server.url + f"{ATTENTION}.html")
    box = heatmap(w, "fig-cross-table")
    tip, _ = point_at(w, box, 0, 4, 17, how="tap")
    assert "编码器位置（键、值） 17" in tip["text"]
    assert 0 <= tip["rect"]["left"] and tip["rect"]["right"] <= PHONE["width"], tip["rect"]
    w.page.touchscreen.tap(5, 5)
    assert box.evaluate(TIP_JS) is None, "tapping elsewhere should close the tooltip"


def test_heatmap_reads_the_same_in_print_and_without_javascript(server, watch, browser):
    """The interaction adds nothing to the figure: without JavaScript it looks the same,
    and printing leaves out the cursor and the tooltip."""
    w = watch(viewport=DESKTOP, color_scheme="light")
    w.open(server.url + f"{MECHANISM}.html")
    box = heatmap(w, "fig-walkthrough-weights")
    svg_before = box.locator("svg").evaluate("(s) => s.outerHTML")
    with_js = photograph(box)
    point_at(w, box, 0, 3, 3)
    assert box.locator("svg").evaluate("(s) => s.outerHTML") == svg_before
    w.page.emulate_media(media="print")
    hidden = box.evaluate("""(b) => [...b.querySelectorAll('.attnbook-heatmap-cursor, .attnbook-heatmap-tip')]
        .map((e) => getComputedStyle(e).display)""")
    assert hidden == ["none", "none"], hidden

    off = watch(viewport=DESKTOP, color_scheme="light", java_script_enabled=False)
    off.open(server.url + f"{MECHANISM}.html")
    without_js = photograph(off.page.locator("#fig-walkthrough-weights .attnbook-fig"))
    # The explorable figures' controls (added by JavaScript) make the page taller, so the
    # figure may sit a fraction of a pixel lower: its photograph can gain a row, top or bottom.
    assert all(abs(a - b) <= 1 for a, b in zip(without_js.shape, with_js.shape)), (without_js.shape, with_js.shape)
    assert aligned_difference(without_js, with_js) < 1, "the figure looks different without JavaScript"


# --- screenshots of the section page for a person to look at -----------------------------


@pytest.mark.parametrize("theme", ["light", "dark", "dark-picked-on-light-system"])
def test_section_screenshots(theme, server, watch):
    """The whole section page in each theme, as the reader sees it once the theme is
    picked: the picture must be in that theme, at the viewport's width."""
    w = open_in_theme(watch, server, f"{ATTENTION}.html", theme)
    SHOTS.mkdir(parents=True, exist_ok=True)
    png = w.page.screenshot(path=str(SHOTS / f"section-{theme}.png"), full_page=True)
    problems = screenshot_problems(png, DESKTOP["width"], theme.split("-")[0]) + w.problems()
    assert not problems, f"section-{theme}.png:" + fmt(problems)
