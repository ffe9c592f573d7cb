"""The explorable figures (book/_ext/static/explore.js) in Chromium: every control moved, every
shown value compared with the package's.

For each figure the build made explorable, the build wrote the package's weights for
every setting of its controls (attnbook.pages.explorable, moved out of the page into
_build/fixtures/explorable/<figure>.json). One page load per figure then:

* starts from the build's figure: the tables the page's hover reads are the ones drawn;
* moves every control, as a reader does (a click on a radio button or a checkbox, a
  choice in a list, arrow keys on a slider), through every setting, and compares the
  recomputed tables (what the hover reads) with the package's, within 1e-5, and the
  numbers the readout announces with the same tables;
* hovers over a cell after a change: the tooltip shows the new weight, and the cell is
  painted in that weight's colour of the colour map;
* checks what a mask must do: masked weights exactly 0, a fully masked row all zeros.

Then the same page without JavaScript (no controls), from file:// (the offline zip),
on a phone by touch, and in the dark theme; screenshots go to
test-artifacts/browser/explorable/.
"""

from __future__ import annotations

import io
import itertools
import json
import re

import numpy as np
import pytest
from matplotlib import colormaps
from PIL import Image

from browsing import ARTIFACTS
from buildfiles import BUILD, HTML

pytestmark = pytest.mark.browser

FIXTURES = BUILD / "fixtures" / "explorable"
SHOTS = ARTIFACTS / "explorable"
TOL = 1e-5
PIXEL_TOLERANCE = 8
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
EXPECTED_FIGURES = {"fig-walkthrough-weights": "scaling", "fig-mask-comparison": "masks", "fig-head-grid": "heads",
                    "fig-scaling": "saturation"}

TABLES_JS = """(box) => { const s = box.querySelector('script.attnbook-heatmap-data');
    return s ? JSON.parse(s.textContent).map((p) => p.values) : []; }"""
READOUT_JS = """(box) => { const o = box.parentElement.querySelector('.attnbook-explore-readout');
    return {text: o.textContent, data: {...o.dataset}, live: o.getAttribute('aria-live')}; }"""
CELL_JS = """(box, [p, r, c]) => {
    const data = JSON.parse(box.querySelector('script.attnbook-heatmap-data').textContent);
    const img = box.querySelector('svg').getElementById(data[p].image);
    img.scrollIntoView({block: 'center'});
    const b = img.getBoundingClientRect(), f = box.getBoundingClientRect();
    const rows = data[p].values.length, cols = data[p].values[0].length;
    const x = b.left + (c + 0.5) * b.width / cols, y = b.top + (r + 0.5) * b.height / rows;
    return {x, y, fx: x - f.left, fy: y - f.top, value: data[p].values[r][c], vmax: data[p].vmax};
}"""
# Each ring: its centre, its curve's drawn points, and the drawn points of every curve of its panel.
RINGS_JS = """(box) => { const svg = box.querySelector('svg');
    const data = JSON.parse(box.querySelector('script.attnbook-explorable-data').textContent);
    const pts = (id) => [...svg.getElementById(id).querySelectorAll('use')].map((u) => [Number(u.getAttribute('x')), Number(u.getAttribute('y'))]);
    return [...svg.querySelectorAll('circle[data-curve]')].map((c) => {
        const metric = c.dataset.curve.split('-').slice(-1)[0];
        const panel = Object.fromEntries(Object.entries(data.ids).filter(([k]) => k.endsWith(metric)).map(([k, id]) => [k, pts(id)]));
        return {x: Number(c.getAttribute('cx')), y: Number(c.getAttribute('cy')), shown: c.style.display !== 'none',
                curve: c.dataset.curve.replace(/^fig\\d+-/, ''), points: pts(c.dataset.curve), panel};
    }); }"""
# What the figure shows after a change, in one round trip: the tables the hover reads, the
# readout, the state the figure says it is in, and (the saturation figure) its rings and curves.
SHOWN_JS = f"""(box) => ({{tables: ({TABLES_JS})(box), readout: ({READOUT_JS})(box), state: box.dataset.state,
    rings: box.querySelector('circle[data-curve]') ? ({RINGS_JS})(box) : [],
    curves: box.querySelector('circle[data-curve]') ? JSON.parse(box.querySelector('script.attnbook-explorable-data').textContent).curves : null}})"""
TIP_JS = "(box) => { const t = box.querySelector('.attnbook-heatmap-tip'); return t && !t.hidden ? t.textContent : null; }"


def fixtures() -> dict:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))}


def page_of(figure: str) -> str:
    for path in sorted((HTML / "book").rglob("*.html")):
        if f'id="{figure}"' in path.read_text(encoding="utf-8"):
            return path.relative_to(HTML).as_posix()
    pytest.fail(f"no built page has the figure {figure}")


def biggest_difference(shown, expected) -> float:
    if len(shown) == len(expected) == 0:  # the saturation figure has no tables
        return 0.0
    return float(np.max(np.abs(np.asarray(shown, dtype=float) - np.asarray(expected, dtype=float))))


def pixel_at(box, cell) -> np.ndarray:
    image = np.asarray(Image.open(io.BytesIO(box.screenshot())).convert("RGB"), dtype=float)
    return image[int(cell["fy"]), int(cell["fx"])]


def check_hover(w, box, p, r, c, failures, label):
    """The tooltip over (r, c) shows the table's value, and the cell has its colour."""
    cell = box.evaluate(CELL_JS, [p, r, c])
    colour = np.asarray(colormaps["viridis"](min(cell["value"] / cell["vmax"], 1.0))[:3]) * 255
    pixel = pixel_at(box, cell)
    cell = box.evaluate(CELL_JS, [p, r, c])
    w.page.mouse.move(cell["x"], cell["y"])
    tip = box.evaluate(TIP_JS)
    shown = float(re.search(r"权重 (\S+)", tip).group(1)) if tip else None
    if shown is None or abs(shown - cell["value"]) > 1e-12:
        failures.append(f"{label}: hover over ({p}, {r}, {c}) shows {tip!r}, the table has {cell['value']}")
    if np.abs(pixel - colour).max() > PIXEL_TOLERANCE:
        failures.append(f"{label}: cell ({p}, {r}, {c}) painted {pixel}, weight {cell['value']} is {colour.round()}")
    w.page.mouse.move(1, 1)


# --- the controls, as a reader moves them ------------------------------------------------


def set_scaling(w, form, state):
    form.locator(f"input[type=radio][value={state['scale']}]").click()
    form.locator("select").select_option(str(state["row"]))


def set_masks(w, form, state):
    slider = form.locator("input[type=range]")
    slider.focus()
    w.page.keyboard.press("Home")  # 0 padding positions, then one arrow key per position
    for _ in range(state["padding"]):
        w.page.keyboard.press("ArrowRight")
    box = form.locator("input[type=checkbox]")
    if box.is_checked() != state["causal"]:
        box.click()


def set_heads(w, form, state):
    form.locator(f"input[type=radio][value='{state['heads']}']").click()


def set_saturation(w, form, state):
    now, step = form.locator("input[type=range]").evaluate("(s) => { s.focus(); return [Number(s.value), Number(s.step)]; }")
    for _ in range(abs(state["d_k"] - now) // step):
        w.page.keyboard.press("ArrowRight" if state["d_k"] > now else "ArrowLeft")


def saturation_settings(fx):
    d = fx["settings"]["d_k"]
    return [{"d_k": k} for k in range(d["from"], d["to"] + 1, d["step"])]


SATURATION_WORST = [0.0]  # the largest difference of the saturation readout, for the artifact


def saturation_readout(state, tables, readout, failures, label, fx, shown_now):
    """The readout gives the package's measurement on the sample; at a d_k the build drew,
    each ring sits at that d_k on its curve's x and at its own value on the panel's scale."""
    shown = json.loads(readout["data"]["values"])
    for name, metrics in fx["expected"][str(state["d_k"])].items():
        for metric, value in metrics.items():
            SATURATION_WORST[0] = max(SATURATION_WORST[0], abs(shown[name][metric] - value))
            if not abs(shown[name][metric] - value) <= TOL:
                failures.append(f"{label}: {name} {metric} shown {shown[name][metric]}, the package {value}")
            if f"{value:.3f}" not in readout["text"]:
                failures.append(f"{label}: readout {readout['text']!r} does not say {value:.3f}")
    rings = shown_now["rings"]
    if len(rings) != 6 or not all(r["shown"] for r in rings):
        failures.append(f"{label}: {len(rings)} rings shown, not one per curve (6)")
    curves = shown_now["curves"]
    if state["d_k"] not in curves["d_k"]:
        return
    i = curves["d_k"].index(state["d_k"])
    for ring in rings:
        key = ring["curve"].split("curve-", 1)[1]
        name, metric = key.split("-")
        x, _ = ring["points"][i]
        same = [(curves[k][j], p[1]) for k, pts in ring["panel"].items() for j, p in enumerate(pts)]
        (v0, y0), (v1, y1) = min(same), max(same)
        y = y0 + (shown[name][metric] - v0) / (v1 - v0) * (y1 - y0)
        if abs(ring["x"] - x) > 1.5 or abs(ring["y"] - y) > 1.5:
            failures.append(f"{label}: the ring of {key} is at ({ring['x']}, {ring['y']}), not ({x}, {y})")


def scaling_settings(fx):
    return [{"scale": s, "row": r} for s in fx["settings"]["scale"] for r in fx["settings"]["row"]]


def masks_settings(fx):
    return [{"padding": p, "causal": c} for p, c in itertools.product(fx["settings"]["padding"], [False, True])]


def heads_settings(fx):
    return [{"heads": h} for h in fx["settings"]["heads"]]


def heads_expected(fx, state):
    return fx["expected"][str(state["heads"])]["weights"]


def heads_readout(state, tables, readout, failures, label):
    if len(tables) != state["heads"]:
        failures.append(f"{label}: {len(tables)} tables for {state['heads']} heads")
    tops = [float(np.asarray(t).max(1).mean()) for t in tables]
    if biggest_difference(json.loads(readout["data"]["tops"]), tops) > TOL:
        failures.append(f"{label}: readout {readout['data']['tops']}, the tables give {tops}")
    if not all(f"头 {h + 1} {v:.3f}" in readout["text"] for h, v in enumerate(tops)):
        failures.append(f"{label}: readout {readout['text']!r} does not say {tops}")


def scaling_expected(fx, state):
    return [fx["expected"][state["scale"]]["weights"]]


def masks_expected(fx, state):
    return fx["expected"][f"{state['padding']},{int(state['causal'])}"]["weights"]


def scaling_readout(state, tables, readout, failures, label):
    row = np.asarray(tables[0][state["row"]])
    top = row.max()
    entropy = -float(np.sum(row[row > 0] * np.log(row[row > 0])))
    got = {k: float(readout["data"][k]) for k in ("max", "entropy")}
    if abs(got["max"] - top) > TOL or abs(got["entropy"] - entropy) > TOL:
        failures.append(f"{label}: readout {got}, the table gives max {top}, entropy {entropy}")
    if f"最大权重 {top:.3f}" not in readout["text"] or f"熵 {entropy:.3f} nat" not in readout["text"]:
        failures.append(f"{label}: readout {readout['text']!r} does not say max {top:.3f}, entropy {entropy:.3f}")


def masks_readout(state, tables, readout, failures, label):
    masked = np.asarray(tables[1])
    n = masked.shape[1]
    real = n - state["padding"]
    if np.any(masked[:, real:] != 0):
        failures.append(f"{label}: masked keys have weights {masked[:, real:].max()}, not exactly 0")
    if state["causal"] and np.any(np.triu(masked, 1) != 0):
        failures.append(f"{label}: the causal mask lets a query see a later key")
    empty = int(np.sum(np.all(masked == 0, axis=1)))
    if real == 0 and empty != n:
        failures.append(f"{label}: a fully padded sequence leaves {n - empty} rows with weights")
    if np.isnan(masked).any():
        failures.append(f"{label}: NaN in the masked table")
    if int(readout["data"]["empty"]) != empty or float(readout["data"]["kept"]) != 0.0:
        failures.append(f"{label}: readout {readout['data']}, the table has {empty} empty rows")
    if real and real < n:
        leak = float(np.asarray(tables[0])[:real, real:].sum(1).mean())
        if abs(float(readout["data"]["leak"]) - leak) > TOL or f"{leak * 100:.1f}%" not in readout["text"]:
            failures.append(f"{label}: readout {readout['text']!r}, the unmasked table leaks {leak:.1%}")


KINDS = {
    "scaling": (set_scaling, scaling_settings, scaling_expected, scaling_readout, (0, 3, 5)),
    "masks": (set_masks, masks_settings, masks_expected, masks_readout, (1, 2, 6)),
    "heads": (set_heads, heads_settings, heads_expected, heads_readout, (0, 4, 9)),
    "saturation": (set_saturation, saturation_settings, lambda fx, state: [], saturation_readout, None),
}


def test_the_build_wrote_a_fixture_for_each_explorable_figure():
    found = fixtures()
    assert {k: v["kind"] for k, v in found.items()} == EXPECTED_FIGURES, sorted(found)


@pytest.mark.parametrize("figure", sorted(EXPECTED_FIGURES))
def test_every_control_gives_the_package_values(figure, server, watch):
    fx = fixtures().get(figure)
    assert fx, f"no fixture for {figure} in {FIXTURES}"
    move, settings, expected, readout_check, cell = KINDS[fx["kind"]]
    w = watch(viewport=DESKTOP)
    w.open(server.url + page_of(figure))
    box = w.page.locator(f"#{figure} .attnbook-explorable")
    form = w.page.locator(f"#{figure} form.attnbook-explore")
    assert box.count() == 1 and form.count() == 1, f"{figure}: no explorable figure with controls"

    failures, worst = [], 0.0
    drawn = box.evaluate(TABLES_JS)
    if drawn != fx["drawn"]:
        failures.append("before any control moves, the tables are not the build's figure")
    start = biggest_difference(drawn, expected(fx, fx["initial"]))
    if start > TOL:
        failures.append(f"the build's figure is {start} from the package's values for its own settings")
    if fx["kind"] == "saturation" and any(r["shown"] for r in box.evaluate(RINGS_JS)):
        failures.append("before the slider moves, the figure already carries rings")
    labels = form.evaluate("""(f) => [...f.querySelectorAll('input, select')].map((c) =>
        (c.labels && c.labels[0] ? c.labels[0].textContent : '') + (c.closest('fieldset') ?
         c.closest('fieldset').querySelector('legend').textContent : ''))""")
    if not labels or not all(re.search(r"[\u4e00-\u9fff]", t) for t in labels):
        failures.append(f"controls without a Chinese label: {labels}")

    announced = set()
    for state in settings(fx):
        move(w, form, state)
        label = f"{figure} {state}"
        now = box.evaluate(SHOWN_JS)
        tables, readout = now["tables"], now["readout"]
        diff = biggest_difference(tables, expected(fx, state))
        worst = max(worst, diff)
        if not diff <= TOL:
            failures.append(f"{label}: shown tables are {diff} from the package's")
        if fx["kind"] == "saturation":
            readout_check(state, tables, readout, failures, label, fx, now)
        else:
            readout_check(state, tables, readout, failures, label)
        if readout["live"] != "polite":
            failures.append(f"{label}: the readout is not announced (aria-live)")
        announced.add(readout["text"])
        if json.loads(now["state"]) != state:
            failures.append(f"{label}: the figure says its state is {now['state']}")
    if len(announced) < len(settings(fx)) // 3:
        failures.append(f"the readout changed {len(announced)} times over {len(settings(fx))} settings")

    # After the last change, hover reads and the paint show the recomputed table.
    for p in range(len(fx["drawn"]) if cell else 0):
        check_hover(w, box, p, *cell[:2], failures, f"{figure} after a change")
        check_hover(w, box, p, cell[2], cell[0], failures, f"{figure} after a change")
    SHOTS.mkdir(parents=True, exist_ok=True)
    w.page.locator(f"#{figure}").screenshot(path=str(SHOTS / f"{figure}-last-setting.png"))
    # Back to the build's settings: the package's values for them again.
    move(w, form, fx["initial"])
    back = biggest_difference(box.evaluate(TABLES_JS), fx["drawn"])
    if back > TOL:
        failures.append(f"back at the initial settings the tables are {back} from the build's figure")
    SHOTS.mkdir(parents=True, exist_ok=True)
    w.page.locator(f"#{figure}").screenshot(path=str(SHOTS / f"{figure}-light.png"))
    if fx["kind"] == "saturation":
        worst = SATURATION_WORST[0]
    (SHOTS / f"{figure}.json").write_text(json.dumps(
        {"settings": len(settings(fx)), "max_difference": worst}, indent=2) + "\n", encoding="utf-8")
    assert not w.problems(), w.problems()
    assert not failures, "\n".join(failures[:20])


def test_controls_without_javascript_from_disk_by_touch_and_in_the_dark(watch):
    """No controls without JavaScript (the figure is the build's); from file:// the
    controls work; on a phone a tap changes the figure; in the dark theme too."""
    page = page_of("fig-mask-comparison")
    off = watch(viewport=DESKTOP, java_script_enabled=False)
    off.open((HTML / page).as_uri())
    assert off.page.locator("form.attnbook-explore").count() == 0

    disk = watch(viewport=DESKTOP, color_scheme="dark")
    disk.open((HTML / page).as_uri())
    form = disk.page.locator("#fig-mask-comparison form.attnbook-explore")
    form.locator("input[type=checkbox]").check()
    tables = disk.page.locator("#fig-mask-comparison .attnbook-explorable").evaluate(TABLES_JS)
    assert np.all(np.triu(np.asarray(tables[1]), 1) == 0), "file://: the causal mask did not apply"
    SHOTS.mkdir(parents=True, exist_ok=True)
    disk.page.locator("#fig-mask-comparison").screenshot(path=str(SHOTS / "fig-mask-comparison-dark-file.png"))
    assert not disk.problems(), disk.problems()

    phone = watch(viewport=PHONE, has_touch=True, is_mobile=True)
    section = page_of("fig-walkthrough-weights")
    phone.open((HTML / section).as_uri())
    form = phone.page.locator("#fig-walkthrough-weights form.attnbook-explore")
    radio = form.locator("input[type=radio][value=none]")
    radio.scroll_into_view_if_needed()
    radio.tap()
    assert radio.is_checked()
    fx = fixtures()["fig-walkthrough-weights"]
    tables = phone.page.locator("#fig-walkthrough-weights .attnbook-explorable").evaluate(TABLES_JS)
    assert biggest_difference(tables, fx["expected"]["none"]["weights"]) <= TOL
    width = phone.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways on a phone ({width} px)"
    phone.page.locator("#fig-walkthrough-weights").screenshot(path=str(SHOTS / "fig-walkthrough-weights-phone.png"))
    assert not phone.problems(), phone.problems()


# --- what the explorable figures add to a page ----------------------------------------

# Bytes added to a page, raw and gzip-compressed alike: the mechanism page carries all four
# explorable figures (twin.js once, and each figure's inputs).
BUDGET = 56_000
SCRIPTS = ["twin.js", "explore.js", "explore-scaling.js", "explore-masks.js", "explore-heads.js",
           "explore-saturation.js"]


def added_bytes(page: str) -> bytes:
    """What the explorable figures put into ``page``: their scripts and their inputs."""
    from book._ext.resolving.figures import compact_js
    from book._ext.shared.scripts import script
    from buildfiles import soup

    html = soup(page)
    ours = {compact_js(script(name)) for name in SCRIPTS}
    parts = [s.string or "" for s in html.find_all("script") if (s.string or "") in ours]
    parts += [s.string or "" for s in html.select("script.attnbook-explorable-data")]
    return "".join(parts).encode("utf-8")


@pytest.mark.parametrize("figure", sorted(EXPECTED_FIGURES))
def test_explorable_figures_stay_within_the_weight_budget(figure):
    import gzip

    page = page_of(figure)
    added = added_bytes(page)
    packed = len(gzip.compress(added, 9))
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"weight-{page.replace('/', '-')}.json").write_text(
        json.dumps({"page": page, "added_bytes": len(added), "added_gzip_bytes": packed}) + "\n", encoding="utf-8")
    assert len(added) > 5_000, "nothing of the explorable figures found in the page"
    assert len(added) <= BUDGET and packed <= BUDGET, f"{page}: adds {len(added)} bytes ({packed} compressed)"
