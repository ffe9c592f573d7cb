"""The claims ledger (论断核对表) in Chromium, at a desktop's width and at a phone's.

The ledger is a five-column table (book/_ext/resolving/claims.py; its CSS is the section "The
claims ledger" of book/_static/book.css). One load per width:

* at 1280 px it is wider than the text column above it (it takes the margin the page's
  absent contents sidebar leaves), stays inside the window and does not scroll;
* at 390 px each row is a card: its cells stacked one under another, the full width of
  the card, each showing its column's header text as a label; nothing sticks out
  sideways;
* at both widths no text in it breaks inside a word: a line may end inside a name in code
  only where the build put a <wbr> (after ``/``, ``::`` and ``_``, before a dot), and in
  other text never between two ASCII characters but at those separators (and after
  ``(`` and ``,`` in code quoted as text).

Screenshots of the first rows go to test-artifacts/browser/ledger-*.png.
"""

from __future__ import annotations

import pytest

from browsing import ARTIFACTS, fmt

pytestmark = pytest.mark.browser

PAGE = "book/claims.html"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

# Every place where a line of the ledger ends between two characters that are not
# separated by white space, with whether the break is allowed: in code, after "/", "::"
# or "_" or before "."; elsewhere, anywhere but between two ASCII characters (CJK text
# breaks between any two characters), unless at those separators or after "(", "," or a
# hyphen (code quoted as text: book/_ext/resolving/claims.py, break_points). Consecutive characters are
# compared within one block (a paragraph, a cell); a character starts a new line when its
# box starts below the middle of the box of the character before it.
BREAKS_JS = r"""() => {
    const table = document.querySelector('table.claims-ledger');
    const blockOf = (el) => {
        while (el && el !== table && getComputedStyle(el).display.startsWith('inline')) el = el.parentElement;
        return el;
    };
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    const breaks = [];
    let block = null, prev = null;  // prev: {ch, rect, code, text}
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!el.getClientRects().length) continue;
        const b = blockOf(el);
        if (b !== block) { block = b; prev = null; }
        const code = el.closest('code');
        for (let i = 0; i < node.data.length; i++) {
            const ch = node.data[i];
            if (/\s/.test(ch)) { prev = null; continue; }
            range.setStart(node, i); range.setEnd(node, i + 1);
            const rect = range.getClientRects()[0];
            if (!rect) continue;
            const text = (code ? code.textContent : node.data);
            if (prev && rect.top > prev.rect.top + prev.rect.height / 2) {
                const before = prev.ch, after = ch;
                const atSeparator = before === '/' || before === '_' || after === '.'
                    || (before === ':' && prev.before === ':');
                let allowed;
                if (code && prev.code === code) {
                    allowed = atSeparator;
                } else {
                    allowed = !(/[\x21-\x7e]/.test(before) && /[\x21-\x7e]/.test(after))
                        || atSeparator || '(,-'.includes(before);
                }
                breaks.push({allowed, code: !!(code && prev.code === code),
                             at: `${before}|${after}`, text: text.trim().slice(0, 90)});
            }
            prev = {ch, rect, code, before: prev ? prev.ch : null};
        }
    }
    return breaks;
}"""

DESKTOP_JS = """() => {
    const table = document.querySelector('table.claims-ledger');
    const text = document.querySelector('.editorial-page');
    const scroller = table.closest('.pst-scrollable-table-container');
    const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width}; };
    return {table: box(table), text: box(text), window: window.innerWidth,
            scroll: [scroller.scrollWidth, scroller.clientWidth],
            sidebar: !!document.querySelector('.bd-sidebar-secondary'),
            headers: [...table.querySelectorAll('thead th')].map((th) => th.getAttribute('scope'))};
}"""

# Per body row: its visible cells in order on the screen, each with its box, its label
# (data-label, the ::before that shows it) and the header text of its column.
PHONE_JS = """() => {
    const table = document.querySelector('table.claims-ledger');
    const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    const rows = [...table.querySelectorAll('tbody tr')].map((tr) => {
        const row = tr.getBoundingClientRect();
        const cells = [...tr.children].map((td, column) => {
            const r = td.getBoundingClientRect();
            const before = getComputedStyle(td, '::before');
            return {column, header: headers[column], label: td.dataset.label || '',
                    shown: r.height > 0 && getComputedStyle(td).display !== 'none',
                    top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width,
                    before: before.content, beforeDisplay: before.display,
                    beforeVisible: before.visibility === 'visible' && parseFloat(before.fontSize) >= 10
                                   && before.color !== 'rgba(0, 0, 0, 0)'};
        }).filter((c) => c.shown).sort((a, b) => a.top - b.top);
        return {id: tr.id, display: getComputedStyle(tr).display, left: row.left, right: row.right,
                width: row.width, cells};
    });
    const vw = window.innerWidth;
    const sticking = [...table.querySelectorAll('*')].filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.right > vw + 1;
    }).map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}: right ${Math.round(el.getBoundingClientRect().right)}`);
    const scroller = table.closest('.pst-scrollable-table-container');
    return {rows, sticking: sticking.slice(0, 10), window: vw,
            page: [document.documentElement.scrollWidth, vw],
            scroll: [scroller.scrollWidth, scroller.clientWidth]};
}"""


def word_breaks(w):
    """``(breaks, failures)``: the line ends inside the ledger, and the ones inside a word."""
    breaks = w.page.evaluate(BREAKS_JS)
    bad = [f"{b['at']!r} in {'code' if b['code'] else 'text'} {b['text']!r}" for b in breaks if not b["allowed"]]
    return breaks, [f"a line ends inside a word: {fmt(bad[:15])}"] if bad else []


def shoot(w, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    w.page.evaluate("() => document.querySelector('table.claims-ledger').scrollIntoView()")
    w.page.screenshot(path=str(ARTIFACTS / name))


def test_the_ledger_reads_on_a_desktop_and_on_a_phone(server, watch):
    failures = []

    w = watch(viewport=DESKTOP)
    w.open(server.url + PAGE)
    d = w.page.evaluate(DESKTOP_JS)
    if d["table"]["width"] < 1.25 * d["text"]["width"]:
        failures.append(f"desktop: the ledger is {d['table']['width']:.0f} px wide, the text column "
                        f"{d['text']['width']:.0f} px: not wider than the text")
    if d["table"]["left"] < d["text"]["left"] - 1 or d["table"]["right"] > d["window"]:
        failures.append(f"desktop: the ledger spans {d['table']['left']:.0f}–{d['table']['right']:.0f} px, "
                        f"the text starts at {d['text']['left']:.0f}, the window is {d['window']} px")
    if d["scroll"][0] > d["scroll"][1] + 1:
        failures.append(f"desktop: the ledger scrolls sideways ({d['scroll'][0]} > {d['scroll'][1]} px)")
    if d["sidebar"]:
        failures.append("desktop: the page has a contents sidebar, where the ledger should be")
    if set(d["headers"]) != {"col"}:
        failures.append(f"desktop: header cells' scope: {d['headers']}, not all 'col'")
    breaks, bad = word_breaks(w)
    failures += [f"desktop: {b}" for b in bad]
    shoot(w, "ledger-desktop.png")
    failures += [f"desktop: {m}" for m in w.problems()]

    w = watch(viewport=PHONE)
    w.open(server.url + PAGE)
    p = w.page.evaluate(PHONE_JS)
    cards = []  # what is wrong with the rows as cards
    for row in p["rows"]:
        where = f"row {row['id']}"
        if row["display"] in ("table-row", "contents") or row["right"] > p["window"]:
            cards.append(f"{where} is not a card (display {row['display']}, right {row['right']:.0f})")
        if len(row["cells"]) < 4:
            cards.append(f"{where} shows {len(row['cells'])} cells")
        for above, cell in zip(row["cells"], row["cells"][1:]):
            if cell["top"] < above["bottom"] - 1:
                cards.append(f"{where}: {cell['header']} is beside {above['header']}, not under it")
        for cell in row["cells"]:
            if cell["width"] < 0.8 * row["width"] and cell["column"] != 0:  # 编号 sits on one line
                cards.append(f"{where}: {cell['header']} is {cell['width']:.0f} px of the card's {row['width']:.0f}")
            if cell["label"] != cell["header"] or cell["label"] not in cell["before"] \
                    or cell["beforeDisplay"] == "none" or not cell["beforeVisible"]:
                cards.append(f"{where}: {cell['header']} shows no label (data-label {cell['label']!r}, "
                             f"::before {cell['before']!r}, display {cell['beforeDisplay']})")
    if cards:
        failures.append(f"phone: {len(cards)} problems with the rows as cards, the first:{fmt(cards[:8])}")
    if not p["rows"]:
        failures.append("phone: no rows in the ledger")
    if p["page"][0] > p["page"][1] + 1 or p["scroll"][0] > p["scroll"][1] + 1 or p["sticking"]:
        failures.append(f"phone: something sticks out sideways (page {p['page']}, ledger {p['scroll']}):"
                        f"{fmt(p['sticking'])}")
    phone_breaks, bad = word_breaks(w)
    failures += [f"phone: {b}" for b in bad]
    if not any(b["code"] for b in phone_breaks):
        failures.append("phone: no name in code wraps at all: the word-break check checked nothing")
    shoot(w, "ledger-phone.png")
    failures += [f"phone: {m}" for m in w.problems()]

    assert not failures, f"{PAGE}:" + fmt(failures)
