// Figures opened full size (book/_ext/resolving/figures.py adds this inline to pages with figures).
// A figure is drawn to the column's width: on a phone about a third of its size, its
// labels 3 to 5 px high. Under each figure whose smallest label is drawn under MIN_TEXT_PX
// CSS px (measured again whenever the figure's width changes), a 「放大查看」 button opens
// a copy of it at its own size in a modal dialog under the figure's caption, scrolled
// sideways where it is wider than the window (a hint says so). Enter or Space on the
// button opens it; Escape or 「关闭」 closes it, and focus goes back to the button. The
// figure on the page is not touched.
(() => {
  "use strict";
  // The tests require 9 px or a button; a Chinese label of 9 to 11 px still makes a reader
  // squint (a phone sets body text at 16), so the button comes under 11.
  const MIN_TEXT_PX = 11;
  const GLYPH_EM = 100; // matplotlib writes text as glyphs drawn 100 units to the em
  const scale = (m) => Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));

  // The font size in CSS px of the smallest text of the SVG as drawn now.
  function smallestText(svg) {
    const glyphs = [...svg.querySelectorAll("use:not([x])")].map((u) => GLYPH_EM * scale(u.getScreenCTM()));
    const texts = [...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale(t.getScreenCTM()));
    return Math.min(...glyphs, ...texts);
  }

  function element(tag, className, text) {
    const el = document.createElement(tag);
    el.className = className;
    if (text) el.textContent = text;
    return el;
  }

  function makeDialog() {
    const dialog = element("dialog", "attnbook-zoom-dialog");
    const bar = element("div", "attnbook-zoom-bar");
    const title = element("p", "attnbook-zoom-title");
    const hint = element("p", "attnbook-zoom-hint", "左右滑动查看全图");
    const close = element("button", "attnbook-zoom-close", "关闭");
    const view = element("div", "attnbook-zoom-view");
    title.id = "attnbook-zoom-title";
    dialog.setAttribute("aria-labelledby", title.id);
    close.type = "button";
    close.addEventListener("click", () => dialog.close());
    view.tabIndex = 0; // arrow keys scroll a figure wider than the window
    bar.append(title, close);
    dialog.append(bar, hint, view);
    dialog.addEventListener("close", () => {
      view.replaceChildren();
      if (dialog.opener) dialog.opener.focus();
    });
    document.body.append(dialog);
    return { dialog, title, hint, view };
  }

  let zoom = null;

  function open(box, button) {
    zoom = zoom || makeDialog();
    const svg = box.querySelector("svg.attnbook-svg");
    const copy = svg.cloneNode(true);
    // The page's ids stay unique; the copy's url(#…) references find the original's clip paths.
    copy.querySelectorAll("[id]").forEach((el) => el.removeAttribute("id"));
    copy.style.width = `${svg.getAttribute("width")}px`;
    const caption = box.closest("figure")?.querySelector("figcaption")?.cloneNode(true);
    caption?.querySelectorAll("a.headerlink").forEach((a) => a.remove());
    caption?.querySelectorAll("[id]").forEach((el) => el.removeAttribute("id"));
    zoom.title.replaceChildren(...(caption ? caption.childNodes : ["图"]));
    zoom.view.replaceChildren(copy);
    zoom.dialog.opener = button;
    zoom.dialog.showModal();
    zoom.view.scrollTo(0, 0); // a figure opened before left its own scroll position
    zoom.hint.hidden = zoom.view.scrollWidth <= zoom.view.clientWidth;
  }

  function update(box) {
    const svg = box.querySelector("svg.attnbook-svg");
    const shown = svg && svg.getBoundingClientRect().width > 0;
    box.attnbookZoom.hidden = !(shown && smallestText(svg) < MIN_TEXT_PX);
  }

  const resized = new ResizeObserver((entries) => entries.forEach((e) => update(e.target)));

  function enhance(box) {
    const button = element("button", "attnbook-zoom", "放大查看");
    button.type = "button";
    button.hidden = true;
    button.setAttribute("aria-haspopup", "dialog");
    button.addEventListener("click", () => open(box, button));
    box.after(button);
    box.attnbookZoom = button;
    resized.observe(box);
  }

  const start = () => document.querySelectorAll(".attnbook-fig").forEach(enhance);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
