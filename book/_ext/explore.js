// Explorable figures (book/_ext/figures.py adds this inline, after twin.js and heatmap.js,
// to the pages that have them). Each .attnbook-explorable heat map carries its inputs
// (script.attnbook-explorable-data, written by attnbook.plots._explorable). This adds the
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

  // ±1 packed as bits, eight to a byte, lowest bit first (attnbook.plots._explorable._bits).
  function signs(a) {
    const bytes = Uint8Array.from(atob(a.bits), (c) => c.charCodeAt(0));
    const m = T.matrix(a.shape[0], a.shape[1]);
    m.data.forEach((_, i) => { m.data[i] = (bytes[i >> 3] >> (i & 7)) & 1 ? 1 : -1; });
    return m;
  }

  const columns = (m, d) => T.matrix(m.rows, d, Float64Array.from({ length: m.rows * d }, (_, i) => m.data[Math.floor(i / d) * m.cols + (i % d)]));

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
        this.inputs[k] = v && v.bits ? signs(v) : v && v.shape ? decode(v) : v;
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

  // The shape walkthrough's weights under three divisors (attention.md).
  class Scaling extends Explorable {
    constructor(box) {
      super(box);
      const { d_k: dk, d_model: dm } = this.inputs;
      this.radios("缩放分母", "scale", [
        ["d_k", `除以 √d_k = √${dk}（正确做法）`], ["d_model", `除以 √d_model = √${dm}（常见错误）`],
        ["none", "不缩放"]]);
      this.select("查看第几个查询位置的一行：", "row", this.data.settings.row);
      this.finish("编者加的交互：换一种缩放分母，浏览器当场重算这张权重表");
    }

    weights() {
      const { x, wq, bq, wk, bk, d_k: dk, d_model: dm } = this.inputs;
      const divisor = { d_k: Math.sqrt(dk), d_model: Math.sqrt(dm), none: 1 }[this.state.scale];
      return rowsOf(T.maskedSoftmax(T.scores(T.project(x, wq, bq.data), T.project(x, wk, bk.data), divisor), null));
    }

    // The row selector only reads the table; the divisor recomputes it.
    update(changed) {
      const values = changed === "scale" ? this.weights() : this.panels[0].values;
      const row = values[this.state.row];
      const { max, entropy } = T.rowStats(T.matrix(1, row.length, Float64Array.from(row)), 0);
      const name = { d_k: "除以 √d_k", d_model: "除以 √d_model", none: "不缩放" }[this.state.scale];
      const summary = `${name}：查询位置 ${this.state.row} 的权重 ${row.map((v) => fixed(v, 3)).join("、")}；`
        + `最大权重 ${fixed(max, 3)}；熵 ${fixed(entropy, 3)} nat（均匀分布为 ${fixed(Math.log(row.length), 3)}）`;
      this.show([values], summary, changed);
      Object.assign(this.readout.dataset, { max: String(max), entropy: String(entropy) });
    }
  }

  // The padding and causal masks on one padded sequence (mechanism.md).
  class Masks extends Explorable {
    constructor(box) {
      super(box);
      const n = this.inputs.x.rows;
      const label = el("label", {}, this.form, "填充位置的个数：");
      const range = el("input", { type: "range", min: "0", max: String(n), step: "1", value: String(this.state.padding) }, label);
      this.rangeValue = el("span", { class: "attnbook-explore-value", "aria-hidden": "true" }, label);
      this.range = range;
      range.addEventListener("input", () => this.set("padding", Number(range.value)));
      const check = el("label", {}, this.form);
      const box2 = el("input", { type: "checkbox", name: `${this.id}-causal` }, check);
      check.appendChild(document.createTextNode("右表再加因果掩码"));
      box2.addEventListener("change", () => this.set("causal", box2.checked));
      this.finish("编者加的交互：改变填充个数、打开因果掩码，浏览器当场重算两张权重表");
    }

    compute() {
      const { x, wq, bq, wk, bk, heads } = this.inputs;
      const n = x.rows, real = n - this.state.padding;
      const padded = T.matrix(n, x.cols, x.data.map((v, i) => (Math.floor(i / x.cols) < real ? v : 0)));
      const p = { wq, bq: bq.data, wk, bk: bk.data };
      const unmasked = mean(T.multiHead(padded, null, p, heads, null).weights);
      const masked = mean(T.multiHead(padded, null, p, heads, T.mask(n, { length: real, causal: this.state.causal })).weights);
      return [rowsOf(unmasked), rowsOf(masked)];
    }

    update(changed) {
      const n = this.inputs.x.rows, real = n - this.state.padding;
      const tables = changed ? this.compute() : this.panels.map((p) => p.values);
      this.move(real);
      const padShare = (t) => {
        const rows = t.slice(0, real).map((row) => row.slice(real).reduce((a, b) => a + b, 0));
        return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
      };
      const empty = tables[1].filter((row) => row.every((v) => v === 0)).length;
      const leak = padShare(tables[0]), kept = padShare(tables[1]);
      this.range.setAttribute("aria-valuetext", `填充 ${this.state.padding} 个，真实长度 ${real}`);
      this.rangeValue.textContent = ` ${this.state.padding}（真实长度 ${real}）`;
      let summary = `真实长度 ${real}，填充 ${this.state.padding} 个${this.state.causal ? "，右表加了因果掩码" : ""}。`;
      if (real === n) summary += "没有填充位置。";
      else if (real === 0) summary += "整段都是填充：右表每一行都没有可看的键，权重全为 0。";
      else summary += `无掩码时补零的键平均分走 ${fixed(leak * 100, 1)}% 的权重；有掩码时恰好为 ${fixed(kept, 1)}。`;
      if (real > 0 && empty) summary += `右表有 ${empty} 行一个键都不能看，权重全为 0。`;
      this.show(tables, summary, changed);
      Object.assign(this.readout.dataset, { leak: String(leak), kept: String(kept), empty: String(empty) });
    }

    // The dashed lines at the first padded key and query follow the length.
    move(real) {
      this.panels.forEach((panel) => {
        const marks = panel.padding;
        if (!marks) return;
        const image = this.svg.getElementById(panel.image);
        const size = { cols: image.width.baseVal.value / panel.values[0].length,
                       rows: image.height.baseVal.value / panel.values.length };
        ["cols", "rows"].forEach((axis) => {
          const line = marks[axis] && this.svg.getElementById(marks[axis]);
          if (!line) return;
          const shift = (real - marks.length) * size[axis];
          line.setAttribute("transform", axis === "cols" ? `translate(${shift} 0)` : `translate(0 ${shift})`);
          line.style.display = real === panel.values.length ? "none" : "";
        });
      });
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

  // 1, 2, 4 or 8 heads on the same input and projections (attention.md's head grid). The
  // build drew the layer's own head count; for another, a grid of the same kind is drawn
  // here: two tables a row, a title per head, the shared colour bar from 0 to 1.
  class Heads extends Explorable {
    constructor(box) {
      super(box);
      this.original = { svg: this.svg, panels: this.panels };
      this.radios("头数", "heads", this.data.settings.heads.map((h) => [h, `${h} 个头`]));
      this.finish("编者加的交互：换一个头数，浏览器按同一组投影重新切头、重算每个头的表");
    }

    weights() {
      const { x, wq, bq, wk, bk } = this.inputs;
      return T.multiHead(x, null, { wq, bq: bq.data, wk, bk: bk.data }, this.state.heads, null).weights.map(rowsOf);
    }

    // The build's SVG for the layer's own head count, else a new grid for `heads` tables.
    layout(heads, n) {
      if (heads === this.data.initial.heads) return this.original;
      const size = 150, gap = 46, cols = Math.min(heads, 2), rows = Math.ceil(heads / cols);
      const width = 60 + cols * (size + gap) + 60, height = 20 + rows * (size + gap + 10);
      const svg = document.createElementNS(SVG, "svg");
      Object.entries({ class: "attnbook-svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
        "aria-label": `${heads} 个头在同一输入上的注意力权重，每头一张 ${n}×${n} 的表，纵轴为查询位置，横轴为键位置` })
        .forEach(([k, v]) => svg.setAttribute(k, v));
      const ink = "fill: var(--fig-ink); font-size: 13px", panels = [];
      for (let h = 0; h < heads; h += 1) {
        const x = 60 + (h % cols) * (size + gap), y = 24 + Math.floor(h / cols) * (size + gap + 10);
        svgEl("text", { x: x + size / 2, y: y - 6, "text-anchor": "middle", style: ink }, svg, `头 ${h + 1}`);
        const id = `${this.id}-head-${h}`;
        svgEl("image", { id, x, y, width: size, height: size, preserveAspectRatio: "none" }, svg);
        svgEl("rect", { x, y, width: size, height: size, style: "fill: none; stroke: var(--fig-muted); stroke-width: 0.6" }, svg);
        svgEl("text", { x: x + size / 2, y: y + size + 16, "text-anchor": "middle", style: ink }, svg, "键位置");
        if (h % cols === 0) {
          svgEl("text", { x: x - 10, y: y + size / 2, "text-anchor": "middle", transform: `rotate(-90 ${x - 10} ${y + size / 2})`, style: ink }, svg, "查询位置");
        }
        panels.push({ image: id, title: `头 ${h + 1}`, vmax: 1, rows: { name: "查询位置" }, cols: { name: "键位置" }, values: [] });
      }
      const bar = svgEl("image", { x: width - 44, y: 24, width: 12, height: height - 60, preserveAspectRatio: "none" }, svg);
      paint(bar, Array.from({ length: 64 }, (_, i) => [1 - i / 63]), 1, this.lut);
      svgEl("text", { x: width - 28, y: 34, style: ink }, svg, "1");
      svgEl("text", { x: width - 28, y: height - 36, style: ink }, svg, "0");
      return { svg, panels };
    }

    update(changed) {
      const { heads } = this.state, n = this.inputs.x.rows;
      let tables = this.panels.map((p) => p.values);
      if (changed) {
        tables = this.weights();
        const { svg, panels } = this.layout(heads, n);
        if (svg !== this.svg) {
          this.svg.replaceWith(svg);
          this.svg = svg;
          const name = svg.getAttribute("aria-label");
          this.box.setAttribute("aria-label", `${name}（用方向键逐格读出查询位置、键位置与权重）`);
        }
        this.panels = panels;
      }
      const depth = this.inputs.wq.cols / heads;
      const tops = tables.map((t) => t.reduce((a, row) => a + Math.max(...row), 0) / t.length);
      const summary = `${heads} 个头，每头维度 ${depth}，各除以 √${depth}；每行最大权重的均值：`
        + tops.map((v, h) => `头 ${h + 1} ${fixed(v, 3)}`).join("、");
      this.show(tables, summary, changed);
      this.readout.dataset.tops = JSON.stringify(tops);
    }
  }

  // mechanism.md's measurement on a small ±1 sample: d_k from 4 to 512, three ways to scale;
  // markers on the drawn curves and a readout give the mean largest weight and gradient norm.
  const WAYS = { unscaled: "不缩放", head_depth: "除以 √d_k", d_model: "除以 √d_model" };
  class Saturation extends Explorable {
    constructor(box) {
      super(box);
      const { d_k: depths } = this.data.settings;
      const label = el("label", {}, this.form, "每头维度 d_k：");
      this.range = el("input", { type: "range", min: String(depths[0]), max: String(depths[depths.length - 1]),
        step: String(depths[1] - depths[0]), value: String(this.state.d_k) }, label);
      this.rangeValue = el("span", { class: "attnbook-explore-value", "aria-hidden": "true" }, label);
      this.range.addEventListener("input", () => this.set("d_k", Number(this.range.value)));
      this.markers = this.place();
      this.finish("编者加的交互：拖动 d_k，浏览器在这组样本上当场重算三种缩放下的最大权重与梯度范数");
    }

    // One ring per curve; the curve's drawn points say where d_k and the values lie.
    place() {
      const { curves } = this.data, log = Math.log2;
      return Object.entries(this.data.ids).map(([key, id]) => {
        const group = this.svg.getElementById(id);
        const points = group ? [...group.querySelectorAll("use")].map((u) => [Number(u.getAttribute("x")), Number(u.getAttribute("y"))]) : [];
        if (points.length !== curves.d_k.length) return null;
        const metric = key.split("-")[1];
        const same = Object.keys(curves).filter((k) => k.endsWith(metric)).flatMap((k) => {
          const g = this.svg.getElementById(this.data.ids[k]);
          return [...g.querySelectorAll("use")].map((u, i) => [curves[k][i], Number(u.getAttribute("y"))]);
        });
        const lo = same.reduce((a, b) => (b[0] < a[0] ? b : a)), hi = same.reduce((a, b) => (b[0] > a[0] ? b : a));
        const ring = svgEl("circle", { r: "7", style: "fill: none; stroke: var(--fig-ink); stroke-width: 2" }, group.parentNode);
        const [first, last] = [points[0][0], points[points.length - 1][0]];
        const [d0, d1] = [log(curves.d_k[0]), log(curves.d_k[curves.d_k.length - 1])];
        return { key, ring, x: (d) => first + ((log(d) - d0) / (d1 - d0)) * (last - first),
                 y: (v) => lo[1] + ((v - lo[0]) / (hi[0] - lo[0] || 1)) * (hi[1] - lo[1]) };
      }).filter(Boolean);
    }

    measure(d) {
      const { query, key, upstream, heads } = this.inputs;
      const q = columns(query, d), k = columns(key, d), out = {};
      const divisors = { unscaled: 1, head_depth: Math.sqrt(d), d_model: Math.sqrt(heads * d) };
      Object.entries(divisors).forEach(([name, divisor]) => {
        const w = T.maskedSoftmax(T.scores(q, k, divisor), null);
        let top = 0, grad = 0;
        for (let i = 0; i < w.rows; i += 1) {
          top += T.rowStats(w, i).max / w.rows;
          grad += T.softmaxGradNorm(w, upstream, i) / w.rows;
        }
        out[name] = { max_weight: top, grad_norm: grad };
      });
      return out;
    }

    update() {
      const d = this.state.d_k, values = this.measure(d);
      this.markers.forEach((m) => {
        const [name, metric] = m.key.split("-");
        m.ring.setAttribute("cx", m.x(d));
        m.ring.setAttribute("cy", m.y(values[name][metric]));
      });
      this.range.setAttribute("aria-valuetext", `d_k = ${d}`);
      this.rangeValue.textContent = ` ${d}`;
      const summary = `d_k = ${d}：` + Object.entries(WAYS).map(([name, text]) =>
        `${text}，最大权重 ${fixed(values[name].max_weight, 3)}、梯度范数 ${fixed(values[name].grad_norm, 3)}`).join("；");
      this.show([], summary, false);
      this.readout.dataset.values = JSON.stringify(values);
    }
  }

  const KINDS = { scaling: Scaling, masks: Masks, heads: Heads, saturation: Saturation };

  function start() {
    document.querySelectorAll(".attnbook-explorable").forEach((box) => {
      const kind = JSON.parse(box.querySelector("script.attnbook-explorable-data").textContent).kind;
      if (KINDS[kind]) new KINDS[kind](box);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
