// Explorable figures (book/_ext/resolving/figures.py adds this inline, after twin.js and heatmap.js,
// to the pages that have them, with explore-<kind>.js for each kind of figure they have). Each .attnbook-explorable heat map carries its inputs
// (script.attnbook-explorable-data, written by attnbook.pages.explorable). This adds the
// editor's controls under the figure; when one moves, the twin (window.AttnbookTwin)
// recomputes the tables from the inputs, the heat map is repainted in the colour map,
// its hover values follow, and a summary is announced. Until a control moves, the
// figure is the build's, untouched. Without JavaScript none of this is shown.
(() => {
  "use strict";
  const T = window.AttnbookTwin;
  const fixed = (v, d) => (v === 0 ? "0" : v.toFixed(d));
  let uid = 0;

  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function decode(a) {
    return T.decode(a.data, a.shape[0], a.shape.length > 1 ? a.shape[1] : 1);
  }

  const rowsOf = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));

  function mean(tables) {
    const out = T.matrix(tables[0].rows, tables[0].cols);
    tables.forEach((t) => t.data.forEach((v, i) => { out.data[i] += v / tables.length; }));
    return out;
  }

  // Paint one table as matplotlib's imshow does: colour index floor(v / vmax · 256), 0…255.
  // matplotlib's SVG stores an image upside down and flips it back (scale(1 -1)).
  function paint(image, values, vmax, lut) {
    const flipped = /scale\(1 -1\)/.test(image.getAttribute("transform") || "");
    const rows = values.length, cols = values[0].length, k = 24;
    const canvas = el("canvas", { width: cols * k, height: rows * k });
    const g = canvas.getContext("2d");
    values.forEach((row, r) => row.forEach((v, c) => {
      const i = 3 * Math.min(255, Math.max(0, Math.floor((v / vmax) * 256)));
      g.fillStyle = `rgb(${lut[i]},${lut[i + 1]},${lut[i + 2]})`;
      g.fillRect(c * k, (flipped ? rows - 1 - r : r) * k, k, k);
    }));
    image.setAttribute("href", canvas.toDataURL("image/png"));
  }

  class Explorable {
    constructor(box) {
      this.box = box;
      this.svg = box.querySelector("svg");
      this.data = JSON.parse(box.querySelector("script.attnbook-explorable-data").textContent);
      this.tables = box.querySelector("script.attnbook-heatmap-data");
      this.panels = this.tables ? JSON.parse(this.tables.textContent) : [];
      this.lut = this.data.cmap ? Uint8Array.from(atob(this.data.cmap), (c) => c.charCodeAt(0)) : null;
      this.inputs = {};
      Object.entries(this.data.inputs).forEach(([k, v]) => {
        this.inputs[k] = v && v.data ? decode(v) : v; // explore-saturation.js decodes its own bits
      });
      this.state = { ...this.data.initial };
      this.id = `attnbook-explore-${(uid += 1)}`;
      this.form = el("form", { class: "attnbook-explore", "data-kind": this.data.kind });
      this.form.addEventListener("submit", (e) => e.preventDefault());
      box.insertAdjacentElement("afterend", this.form);
    }

    // New tables for the panels: repaint, hand the values to the hover, announce. On
    // the first call (changed null) the tables are the build's: nothing is repainted.
    show(tables, summary, changed) {
      this.readout.textContent = summary;
      this.box.dataset.state = JSON.stringify(this.state);
      if (!changed || !this.tables) return;
      tables.forEach((values, p) => {
        const panel = this.panels[p];
        panel.values = values;
        paint(this.svg.getElementById(panel.image), values, panel.vmax, this.lut);
      });
      this.tables.textContent = JSON.stringify(this.panels);
      const map = this.box.attnbookHeatmap;
      if (map) {
        map.panels = this.panels;
        if (map.active) map.show(map.active, false);
      }
    }

    radios(legendText, name, options) {
      const set = el("fieldset", {}, this.form);
      el("legend", {}, set, legendText);
      options.forEach(([value, text]) => {
        const label = el("label", {}, set);
        const input = el("input", { type: "radio", name: `${this.id}-${name}`, value }, label);
        input.checked = this.state[name] === value;
        label.appendChild(document.createTextNode(text));
        input.addEventListener("change", () => { if (input.checked) this.set(name, value); });
      });
      return set;
    }

    select(labelText, name, values) {
      const label = el("label", {}, this.form, labelText);
      const select = el("select", { name: `${this.id}-${name}` }, label);
      values.forEach((v) => { el("option", { value: String(v) }, select, String(v)).selected = v === this.state[name]; });
      select.addEventListener("change", () => this.set(name, Number(select.value)));
      return select;
    }

    finish(title) {
      this.form.prepend(el("p", { class: "attnbook-explore-title" }, null, title));
      this.readout = el("output", { class: "attnbook-explore-readout", "aria-live": "polite" }, this.form);
      this.update(null);
    }

    set(name, value) {
      this.state[name] = value;
      this.update(name);
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, parent, text) {
    const e = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }

  const kinds = {}; // explore-<kind>.js adds its class here
  window.AttnbookExplore = { T, SVG, fixed, el, svgEl, decode, rowsOf, mean, paint, Explorable, kinds };

  function start() {
    document.querySelectorAll(".attnbook-explorable").forEach((box) => {
      const kind = JSON.parse(box.querySelector("script.attnbook-explorable-data").textContent).kind;
      if (kinds[kind]) new kinds[kind](box);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
