// Heat maps read cell by cell (book/_ext/figures.py adds this inline to pages with heat maps).
// Each .attnbook-heatmap holds the figure's SVG and its panels as JSON: the id of the
// <image> that draws the table, the panel's title, the axes' names and labels, and the
// values (rows = queries). Pointer, tap or arrow keys pick a cell; its positions and exact
// weight are shown next to it and announced. Nothing here changes the figure itself.
(() => {
  "use strict";
  const number = (v) => (v !== 0 && Math.abs(v) < 1e-4 ? v.toExponential() : String(v));
  const label = (axis, i) => (axis.labels ? axis.labels[i] : String(i));
  const KEYS = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };

  function lines(panels, cell) {
    const p = panels[cell.p];
    const out = panels.length > 1 ? [p.title] : [];
    out.push(`${p.rows.name} ${label(p.rows, cell.r)}`, `${p.cols.name} ${label(p.cols, cell.c)}`,
             `权重 ${number(p.values[cell.r][cell.c])}`);
    return out;
  }

  function element(tag, className, parent) {
    const el = document.createElement(tag);
    el.className = className;
    parent.appendChild(el);
    return el;
  }

  function enhance(box) {
    const svg = box.querySelector("svg");
    const panels = JSON.parse(box.querySelector("script.attnbook-heatmap-data").textContent);
    const images = panels.map((p) => svg.getElementById(p.image));
    if (images.some((img) => !img)) return;
    const cursor = element("div", "attnbook-heatmap-cursor", box);
    const tip = element("div", "attnbook-heatmap-tip", box);
    const live = element("div", "attnbook-sr-only", box);
    cursor.hidden = tip.hidden = true;
    tip.setAttribute("aria-hidden", "true");
    live.setAttribute("aria-live", "polite");
    box.tabIndex = 0;
    box.setAttribute("role", "application");
    box.setAttribute("aria-roledescription", "热图");
    box.setAttribute("aria-label", `${svg.getAttribute("aria-label")}（用方向键逐格读出查询位置、键位置与权重）`);
    let active = null;

    const size = (p) => [panels[p].values.length, panels[p].values[0].length];
    const hit = (x, y) => {
      for (let p = 0; p < panels.length; p += 1) {
        const r = images[p].getBoundingClientRect();
        if (x < r.left || x >= r.right || y < r.top || y >= r.bottom) continue;
        const [rows, cols] = size(p);
        return { p, r: Math.floor(((y - r.top) / r.height) * rows), c: Math.floor(((x - r.left) / r.width) * cols) };
      }
      return null;
    };

    const show = (cell, announce) => {
      active = cell;
      const [rows, cols] = size(cell.p);
      const r = images[cell.p].getBoundingClientRect();
      const b = box.getBoundingClientRect();
      const w = r.width / cols, h = r.height / rows;
      const left = r.left - b.left + cell.c * w, top = r.top - b.top + cell.r * h;
      Object.assign(cursor.style, { left: `${left}px`, top: `${top}px`, width: `${w}px`, height: `${h}px` });
      const text = lines(panels, cell);
      tip.textContent = text.join("\n");
      cursor.hidden = tip.hidden = false;
      const tipLeft = Math.max(0, Math.min(left + w / 2 - tip.offsetWidth / 2, box.clientWidth - tip.offsetWidth));
      const above = top - tip.offsetHeight - 6;
      Object.assign(tip.style, { left: `${tipLeft}px`, top: `${above >= 0 ? above : top + h + 6}px` });
      box.dataset.cell = `${cell.p},${cell.r},${cell.c}`;
      if (announce) live.textContent = text.join("，");
    };

    const hide = () => {
      active = null;
      cursor.hidden = tip.hidden = true;
      delete box.dataset.cell;
    };

    const move = ([dr, dc]) => {
      let { p, r, c } = active;
      r += dr;
      c += dc;
      if (c < 0 && p > 0) [p, c] = [p - 1, Infinity];
      else if (c >= size(p)[1] && p < panels.length - 1) [p, c] = [p + 1, 0];
      const [rows, cols] = size(p);
      return { p, r: Math.min(Math.max(r, 0), rows - 1), c: Math.min(Math.max(c, 0), cols - 1) };
    };

    box.addEventListener("pointermove", (e) => {
      if (e.pointerType === "touch") return;
      const cell = hit(e.clientX, e.clientY);
      if (cell) show(cell, false);
      else if (document.activeElement !== box) hide();
    });
    box.addEventListener("pointerleave", (e) => {
      if (e.pointerType !== "touch" && document.activeElement !== box) hide();
    });
    box.addEventListener("pointerdown", (e) => {
      const cell = hit(e.clientX, e.clientY);
      if (cell) show(cell, true);
    });
    document.addEventListener("pointerdown", (e) => {
      if (!box.contains(e.target)) hide();
    });
    box.addEventListener("focus", () => {
      if (!active) show({ p: 0, r: 0, c: 0 }, true);
    });
    box.addEventListener("blur", hide);
    box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") return hide();
      if (!(e.key in KEYS) || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      show(active ? move(KEYS[e.key]) : { p: 0, r: 0, c: 0 }, true);
    });
    window.addEventListener("resize", () => active && show(active, false));
  }

  const start = () => document.querySelectorAll(".attnbook-heatmap").forEach(enhance);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
