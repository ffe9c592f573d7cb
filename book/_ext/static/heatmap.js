// Heat maps read cell by cell (book/_ext/resolving/figures.py adds this inline to pages with heat maps).
// Each .attnbook-heatmap holds the figure's SVG and its panels as JSON: the id of the
// <image> that draws the table, the panel's title, the axes' names and labels, and the
// values (rows = queries). Pointer, tap or arrow keys pick a cell; its positions and exact
// weight are shown next to it and announced. Nothing here changes the figure itself.
(() => {
  "use strict";
  const KEYS = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
  const FIRST = { p: 0, r: 0, c: 0 };
  const number = (v) => (v !== 0 && Math.abs(v) < 1e-4 ? v.toExponential() : String(v));
  const label = (axis, i) => (axis.labels ? axis.labels[i] : String(i));
  const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

  function element(tag, className, parent) {
    const el = document.createElement(tag);
    el.className = className;
    parent.appendChild(el);
    return el;
  }

  class Heatmap {
    constructor(box, panels) {
      Object.assign(this, { box, panels, active: null });
      this.cursor = element("div", "attnbook-heatmap-cursor", box);
      this.tip = element("div", "attnbook-heatmap-tip", box);
      this.live = element("div", "attnbook-sr-only", box);
      this.cursor.hidden = this.tip.hidden = true;
      this.tip.setAttribute("aria-hidden", "true");
      this.live.setAttribute("aria-live", "polite");
      box.tabIndex = 0;
      box.setAttribute("role", "application");
      box.setAttribute("aria-roledescription", "热图");
      const name = box.querySelector("svg").getAttribute("aria-label");
      box.setAttribute("aria-label", `${name}（用方向键逐格读出查询位置、键位置与权重）`);
    }

    // Looked up each time: explore.js may replace the panels, and the SVG with them.
    get images() {
      const svg = this.box.querySelector("svg");
      return this.panels.map((p) => svg.getElementById(p.image));
    }

    size(p) {
      return [this.panels[p].values.length, this.panels[p].values[0].length];
    }

    hit(x, y) {
      for (let p = 0; p < this.panels.length; p += 1) {
        const r = this.images[p].getBoundingClientRect();
        if (x < r.left || x >= r.right || y < r.top || y >= r.bottom) continue;
        const [rows, cols] = this.size(p);
        return { p, r: Math.floor(((y - r.top) / r.height) * rows), c: Math.floor(((x - r.left) / r.width) * cols) };
      }
      return null;
    }

    lines({ p, r, c }) {
      const panel = this.panels[p];
      return [...(this.panels.length > 1 ? [panel.title] : []),
              `${panel.rows.name} ${label(panel.rows, r)}`, `${panel.cols.name} ${label(panel.cols, c)}`,
              `权重 ${number(panel.values[r][c])}`];
    }

    show(cell, announce) {
      this.active = cell;
      const [rows, cols] = this.size(cell.p);
      const r = this.images[cell.p].getBoundingClientRect(), b = this.box.getBoundingClientRect();
      const w = r.width / cols, h = r.height / rows;
      const left = r.left - b.left + cell.c * w, top = r.top - b.top + cell.r * h;
      Object.assign(this.cursor.style, { left: `${left}px`, top: `${top}px`, width: `${w}px`, height: `${h}px` });
      const text = this.lines(cell);
      this.tip.textContent = text.join("\n");
      this.cursor.hidden = this.tip.hidden = false;
      const tipLeft = clamp(left + w / 2 - this.tip.offsetWidth / 2, 0, this.box.clientWidth - this.tip.offsetWidth);
      const above = top - this.tip.offsetHeight - 6;
      Object.assign(this.tip.style, { left: `${tipLeft}px`, top: `${above >= 0 ? above : top + h + 6}px` });
      this.box.dataset.cell = `${cell.p},${cell.r},${cell.c}`;
      if (announce) this.live.textContent = text.join("，");
    }

    hide() {
      this.active = null;
      this.cursor.hidden = this.tip.hidden = true;
      delete this.box.dataset.cell;
    }

    // One step; past a panel's right or left edge, on into the next or previous panel.
    step([dr, dc]) {
      let { p, r, c } = this.active;
      c += dc;
      if (c < 0 && p > 0) [p, c] = [p - 1, Infinity];
      else if (c >= this.size(p)[1] && p < this.panels.length - 1) [p, c] = [p + 1, 0];
      const [rows, cols] = this.size(p);
      return { p, r: clamp(r + dr, 0, rows - 1), c: clamp(c, 0, cols - 1) };
    }

    listen() {
      const { box } = this;
      const focused = () => document.activeElement === box;
      box.addEventListener("pointermove", (e) => {
        if (e.pointerType === "touch") return;
        const cell = this.hit(e.clientX, e.clientY);
        if (cell) this.show(cell, false);
        else if (!focused()) this.hide();
      });
      box.addEventListener("pointerleave", (e) => e.pointerType !== "touch" && !focused() && this.hide());
      box.addEventListener("pointerdown", (e) => {
        const cell = this.hit(e.clientX, e.clientY);
        if (cell) this.show(cell, true);
      });
      document.addEventListener("pointerdown", (e) => box.contains(e.target) || this.hide());
      box.addEventListener("focus", () => this.active || this.show(FIRST, true));
      box.addEventListener("blur", () => this.hide());
      box.addEventListener("keydown", (e) => this.key(e));
      window.addEventListener("resize", () => this.active && this.show(this.active, false));
    }

    key(e) {
      if (e.key === "Escape") return this.hide();
      if (!(e.key in KEYS) || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      this.show(this.active ? this.step(KEYS[e.key]) : FIRST, true);
    }
  }

  function enhance(box) {
    const svg = box.querySelector("svg");
    const panels = JSON.parse(box.querySelector("script.attnbook-heatmap-data").textContent);
    const images = panels.map((p) => svg.getElementById(p.image));
    if (!images.every(Boolean)) return;
    box.attnbookHeatmap = new Heatmap(box, panels); // explore.js hands it new values
    box.attnbookHeatmap.listen();
  }

  const start = () => document.querySelectorAll(".attnbook-heatmap").forEach(enhance);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
