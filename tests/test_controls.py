"""The page's controls, driven in Chromium: every icon drawn, every button doing its job.

fontawesome.js is gone; the theme's CSS draws the icons with book-icons.woff2, the icon
font cut down at build time (book/_ext/after/webfonts.py). Every icon a page shows must come
out of that font with a non-empty box, and each control must still work: the download
menu (.ipynb, .md, 打印为 PDF), full screen, the colour-mode switch, search (the button
and Ctrl+K), and both sidebar toggles, on a desktop and on a phone. The view switch
is tested in test_views_browser.py. A screenshot of the article header at twice the pixel
density goes to test-artifacts/browser/header-icons.png.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from browsing import ARTIFACTS, fmt
from buildfiles import ATTENTION

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PAGE = f"{ATTENTION}.html"
ARTICLE = ".bd-header-article"

ICONS_JS = """() => [...document.querySelectorAll('[class*="fa-"]')]
    .filter((el) => /(^|\\s)fa-[a-z]/.test(el.className) && el.checkVisibility())
    .map((el) => {
        const before = getComputedStyle(el, '::before');
        const r = el.getBoundingClientRect();
        return {icon: [...el.classList].filter((c) => c.startsWith('fa-')).join(' '),
                content: before.content, font: before.fontFamily, weight: before.fontWeight,
                width: r.width, height: r.height};
    })"""

FONT_FACES_JS = """() => [...document.fonts]
    .filter((f) => f.family.replace(/"/g, '') === 'Font Awesome 6 Free' && f.status === 'loaded').length"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_icon_is_drawn_from_the_subset_font(viewport, server, watch):
    w = watch(viewport=viewport)
    w.open(server.url + PAGE)
    icons = w.page.evaluate(ICONS_JS)
    urls = w.page.evaluate("() => performance.getEntriesByType('resource').map((r) => r.name)")
    assert len(icons) >= 4, f"only {len(icons)} visible icons: {icons}"
    bad = [i for i in icons if i["content"] in ("none", "normal", '""') or "Font Awesome" not in i["font"]
           or i["width"] <= 0 or i["height"] <= 0]
    assert not bad, "icons not drawn by the icon font:" + fmt(bad)
    assert any(u.endswith("/_static/fonts/book-icons.woff2") for u in urls), "book-icons.woff2 not fetched"
    assert not [u for u in urls if "fontawesome" in u], [u for u in urls if "fontawesome" in u]
    assert w.page.evaluate(FONT_FACES_JS) >= 1, "no Font Awesome face loaded"
    if viewport is DESKTOP:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = watch(viewport=viewport, device_scale_factor=2)
        shot.open(server.url + PAGE)
        shot.page.locator(ARTICLE).screenshot(path=str(ARTIFACTS / "header-icons.png"))
    assert not w.problems(), w.problems()


def test_download_menu(server, watch):
    w = watch(viewport=DESKTOP)
    w.page.add_init_script("window.print = () => { window.__printed = (window.__printed || 0) + 1; };")
    w.open(server.url + PAGE)
    w.page.click(f"{ARTICLE} .dropdown-download-buttons > button")
    menu = w.page.locator(f"{ARTICLE} .dropdown-download-buttons .dropdown-menu")
    menu.wait_for(state="visible")
    items = [t.strip() for t in menu.locator(".dropdown-item").all_inner_texts()]
    assert items == [".ipynb", ".md", ".pdf", "全书 PDF"], items
    for link in menu.locator("a.dropdown-item").all():
        href = link.evaluate("(a) => a.href")
        response = w.page.request.get(href)
        assert response.ok and len(response.body()) > 1000, f"{href}: {response.status}"
    pdf = menu.locator(".btn-download-pdf-button")  # Bootstrap moves a tooltip's title
    assert (pdf.get_attribute("title") or pdf.get_attribute("data-bs-original-title")) == "打印为 PDF"
    pdf.click()
    assert w.page.evaluate("() => window.__printed") == 1, "打印为 PDF did not call window.print()"
    assert not w.problems(), w.problems()


def test_full_screen(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + PAGE)
    w.page.click(f"{ARTICLE} .btn-fullscreen-button")
    w.page.wait_for_function("() => document.fullscreenElement !== null")
    w.page.click(f"{ARTICLE} .btn-fullscreen-button")
    w.page.wait_for_function("() => document.fullscreenElement === null")
    assert not w.problems(), w.problems()


def test_colour_mode_switch(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + PAGE)
    state = """() => {
        const shown = [...document.querySelectorAll('.bd-header-article .theme-switch')]
            .filter((i) => i.checkVisibility());
        return {mode: document.documentElement.dataset.mode, theme: document.documentElement.dataset.theme,
                icons: shown.map((i) => [i.dataset.mode, i.getBoundingClientRect().width])};
    }"""
    seen = [w.page.evaluate(state)]
    for _ in range(3):
        w.page.click(f"{ARTICLE} .theme-switch-button")
        seen.append(w.page.evaluate(state))
    modes = [s["mode"] for s in seen]
    assert sorted(modes[:3]) == ["auto", "dark", "light"] and modes[3] == modes[0], modes
    for s in seen:
        assert len(s["icons"]) == 1 and s["icons"][0][0] == s["mode"] and s["icons"][0][1] > 0, s
        assert s["theme"] in ("light", "dark") and (s["mode"] == "auto" or s["theme"] == s["mode"]), s
    assert not w.problems(), w.problems()


@pytest.mark.parametrize("viewport, button", [
    (DESKTOP, ".bd-sidebar-primary .search-button-field"),
    (PHONE, f"{ARTICLE} .search-button__button"),
], ids=["desktop", "phone"])
def test_search_button_opens_the_dialog_and_searches(viewport, button, server, watch):
    w = watch(viewport=viewport)
    w.open(server.url + PAGE)
    w.page.click(button)
    w.page.wait_for_function("() => document.querySelector('#pst-search-dialog').open")
    field = w.page.locator("#pst-search-dialog input[name=q]")
    assert field.evaluate("(el) => el === document.activeElement"), "the search field has no focus"
    assert_icon_clear_of_text(w.page.locator("#pst-search-dialog form.bd-search"))
    field.fill("掩码")
    field.press("Enter")
    w.page.wait_for_url("**/search.html?**")
    assert parse_qs(urlsplit(w.page.url).query)["q"] == ["掩码"], unquote(w.page.url)
    w.page.wait_for_function(
        "() => document.querySelectorAll('#search-results ul.search li').length > 0", timeout=30_000)
    assert_icon_clear_of_text(w.page.locator(".bd-search-container form.bd-search"))
    assert not w.problems(), w.problems()


# The magnifier is drawn from the icon font as an absolutely placed <i>; the typed text
# must start to its right (the theme's own rule assumed Font Awesome's JS, not a font).
ICON_AND_TEXT_JS = """(form) => {
    const icon = form.querySelector('.fa-magnifying-glass').getBoundingClientRect();
    const input = form.querySelector('input[name=q]');
    return {icon_right: icon.right, icon_width: icon.width,
            text_left: input.getBoundingClientRect().left + parseFloat(getComputedStyle(input).paddingLeft)};
}"""


def assert_icon_clear_of_text(form):
    box = form.evaluate(ICON_AND_TEXT_JS)
    assert box["icon_width"] > 0, box
    assert box["icon_right"] <= box["text_left"], f"the magnifier covers the typed text: {box}"


def test_ctrl_k_opens_the_search_dialog(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + PAGE)
    w.page.keyboard.press("Control+k")
    w.page.wait_for_function("() => document.querySelector('#pst-search-dialog').open")
    w.page.keyboard.press("Escape")
    w.page.wait_for_function("() => !document.querySelector('#pst-search-dialog').open")
    assert not w.problems(), w.problems()


SIDEBAR_JS = """() => ({left: document.querySelector('#pst-primary-sidebar').getBoundingClientRect().right,
    primary_dialog: document.querySelector('#pst-primary-sidebar-modal').open,
    secondary_dialog: document.querySelector('#pst-secondary-sidebar-modal').open})"""


def test_primary_sidebar_toggle_on_a_desktop(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + PAGE)
    toggle = f"{ARTICLE} .primary-toggle"
    assert w.page.evaluate(SIDEBAR_JS)["left"] > 0, "the table of contents starts hidden"
    w.page.click(toggle)
    w.page.wait_for_function("() => document.querySelector('#pst-primary-sidebar').getBoundingClientRect().right <= 0")
    w.page.click(toggle)
    w.page.wait_for_function("() => document.querySelector('#pst-primary-sidebar').getBoundingClientRect().right > 0")
    assert not w.problems(), w.problems()


@pytest.mark.parametrize("toggle, dialog", [(".primary-toggle", "primary_dialog"),
                                            (".secondary-toggle", "secondary_dialog")])
def test_sidebar_toggles_on_a_phone(toggle, dialog, server, watch):
    w = watch(viewport=PHONE)
    w.open(server.url + PAGE)
    assert not w.page.evaluate(SIDEBAR_JS)[dialog]
    w.page.click(f"{ARTICLE} {toggle}")
    w.page.wait_for_function(f"() => ({SIDEBAR_JS})().{dialog}")
    links = w.page.locator(f"#pst-{dialog.split('_')[0]}-sidebar-modal a").count()
    assert links >= 3, f"the {dialog} shows {links} links"
    w.page.keyboard.press("Escape")
    w.page.wait_for_function(f"() => !({SIDEBAR_JS})().{dialog}")
    assert not w.problems(), w.problems()
