// Link previews (book/_ext/after/previews.py inlines this after the page's JSON of previews).
// A link whose target has a preview shows it on hover (after a short pause) and on
// keyboard focus. It stays while the pointer is over the link or the preview, and goes on
// Esc, when the pointer leaves both, or when focus leaves the link (WCAG 1.4.13).
(() => {
  "use strict";
  const store = document.getElementById("attnbook-previews");
  if (!store) return;
  const SHOW_MS = 150, HIDE_MS = 250;
  const root = new URL(document.documentElement.dataset.content_root || "./", location.href);
  const previews = new Map(Object.entries(JSON.parse(store.textContent)));
  const tip = document.createElement("div");
  tip.id = "attnbook-preview";
  tip.className = "attnbook-preview";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);
  let current = null, timer = 0;

  const keyOf = (a) => {
    const url = new URL(a.href, location.href);
    if (!url.href.startsWith(root.href)) return null;
    const path = decodeURI(url.pathname.slice(root.pathname.length));
    return url.hash ? `${path}#${decodeURIComponent(url.hash.slice(1))}` : path;
  };

  function place(a) {
    const r = a.getBoundingClientRect(), gap = 6;
    const width = tip.offsetWidth, height = tip.offsetHeight;
    const left = Math.min(Math.max(r.left, 8), document.documentElement.clientWidth - width - 8);
    const below = r.bottom + gap + height <= innerHeight || r.top - gap - height < 0;
    tip.style.left = `${left + scrollX}px`;
    tip.style.top = `${(below ? r.bottom + gap : r.top - gap - height) + scrollY}px`;
  }

  function show(a) {
    clearTimeout(timer);
    if (current === a) return;
    hide();
    const preview = previews.get(a.dataset.previewKey);
    tip.innerHTML = preview.html;  // written by the build from the book's own pages
    tip.dataset.kind = preview.kind;
    tip.hidden = false;
    place(a);
    a.setAttribute("aria-describedby", tip.id);
    current = a;
  }

  function hide() {
    clearTimeout(timer);
    if (!current) return;
    current.removeAttribute("aria-describedby");
    tip.hidden = true;
    current = null;
  }

  const later = (fn, ms) => { clearTimeout(timer); timer = setTimeout(fn, ms); };

  for (const a of document.querySelectorAll("article.bd-article a.reference.internal[href]")) {
    const key = keyOf(a);
    if (!key || !previews.has(key)) continue;
    a.dataset.previewKey = key;
    a.removeAttribute("title");  // the preview says more than the browser's own tooltip
    a.addEventListener("mouseenter", () => later(() => show(a), SHOW_MS));
    a.addEventListener("mouseleave", () => later(hide, HIDE_MS));
    a.addEventListener("focus", () => show(a));
    a.addEventListener("blur", () => current === a && hide());
  }
  tip.addEventListener("mouseenter", () => clearTimeout(timer));
  tip.addEventListener("mouseleave", () => later(hide, HIDE_MS));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && current) hide(); });
  addEventListener("resize", () => current && place(current));
})();
