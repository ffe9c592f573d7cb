// The heads figure's controls: an explore.js kind (book/_ext/resolving/figures.py adds it inline).
(() => {
  "use strict";
  const { T, SVG, fixed, el, svgEl, rowsOf, paint, Explorable } = window.AttnbookExplore;

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


  window.AttnbookExplore.kinds.heads = Heads;
})();
