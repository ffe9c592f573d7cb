// The saturation figure's controls (mechanism.md's √d_k measurement): an explore.js kind
// (book/_ext/resolving/figures.py adds it inline). The page's own curves stay as the build drew them;
// moving d_k repeats the same measurement in the browser on a small ±1 sample that the
// build wrote (attnbook.pages.explorable.explore_saturation) and marks the three results on each
// panel with a ring. Until the slider moves, the figure is the build's.
(() => {
  "use strict";
  const { T, fixed, el, svgEl, Explorable } = window.AttnbookExplore;
  const WAYS = { unscaled: "不缩放", head_depth: "除以 √d_k", d_model: "除以 √d_model" };

  // ±1 packed as bits, eight to a byte, lowest bit first (attnbook.pages.explorable._bits).
  function signs(a) {
    const bytes = Uint8Array.from(atob(a.bits), (c) => c.charCodeAt(0));
    const m = T.matrix(a.shape[0], a.shape[1]);
    m.data.forEach((_, i) => { m.data[i] = (bytes[i >> 3] >> (i & 7)) & 1 ? 1 : -1; });
    return m;
  }

  // The first d columns of m.
  function columns(m, d) {
    const out = T.matrix(m.rows, d);
    for (let i = 0; i < m.rows; i += 1) for (let j = 0; j < d; j += 1) out.data[i * d + j] = m.data[i * m.cols + j];
    return out;
  }

  class Saturation extends Explorable {
    constructor(box) {
      super(box);
      ["query", "key", "upstream"].forEach((k) => { this.inputs[k] = signs(this.data.inputs[k]); });
      const { from, to, step } = this.data.settings.d_k;
      const label = el("label", {}, this.form, "每头维度 d_k：");
      this.range = el("input", { type: "range", min: String(from), max: String(to), step: String(step),
        value: String(this.state.d_k) }, label);
      this.rangeValue = el("span", { class: "attnbook-explore-value", "aria-hidden": "true" }, label);
      this.range.addEventListener("input", () => this.set("d_k", Number(this.range.value)));
      this.rings = this.place();
      const { rows, cols } = this.inputs.query;
      this.finish(`编者加的交互：拖动 d_k，浏览器在一组小样本上（${rows} 个查询、${this.inputs.key.rows} 个键，`
        + `分量取 ±1，d_k 取前 d_k 个分量，最多 ${cols}）重做同样的测量，用圆圈标在图上`);
    }

    // One ring per curve; the curve's drawn points say where a d_k and a value lie.
    place() {
      const { curves, ids } = this.data, log = Math.log2;
      const points = (id) => [...this.svg.getElementById(id).querySelectorAll("use")]
        .map((u) => [Number(u.getAttribute("x")), Number(u.getAttribute("y"))]);
      return Object.entries(ids).map(([key, id]) => {
        const group = this.svg.getElementById(id);
        if (!group || points(id).length !== curves.d_k.length) return null;
        const metric = key.split("-")[1];
        // (value, y) of every drawn point on this panel: the two farthest apart fix the scale.
        const all = Object.keys(ids).filter((k) => k.endsWith(metric))
          .flatMap((k) => points(ids[k]).map(([, y], i) => [curves[k][i], y]));
        const lo = all.reduce((a, b) => (b[0] < a[0] ? b : a)), hi = all.reduce((a, b) => (b[0] > a[0] ? b : a));
        const xs = points(id).map(([x]) => x), n = curves.d_k.length - 1;
        const [d0, d1] = [log(curves.d_k[0]), log(curves.d_k[n])];
        const ring = svgEl("circle", { r: "7", "data-curve": id, style: "fill: none; stroke: var(--fig-ink); stroke-width: 2; display: none" }, group.parentNode);
        return { key, ring, x: (d) => xs[0] + ((log(d) - d0) / (d1 - d0)) * (xs[n] - xs[0]),
                 y: (v) => lo[1] + ((v - lo[0]) / (hi[0] - lo[0] || 1)) * (hi[1] - lo[1]) };
      }).filter(Boolean);
    }

    // As attnbook.scaling.softmax_stats: row means of the largest weight and of the
    // gradient norm of sum(softmax · upstream), for the three divisors.
    measure(d) {
      const { query, key, upstream } = this.inputs, heads = this.data.inputs.heads;
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

    update(changed) {
      const d = this.state.d_k, values = this.measure(d);
      this.rings.forEach(({ key, ring, x, y }) => {
        const [name, metric] = key.split("-");
        Object.assign(ring.style, { display: changed ? "" : "none" });
        ring.setAttribute("cx", x(d));
        ring.setAttribute("cy", y(values[name][metric]));
      });
      this.range.setAttribute("aria-valuetext", `d_k = ${d}`);
      this.rangeValue.textContent = ` ${d}`;
      const summary = `小样本上 d_k = ${d}：` + Object.entries(WAYS).map(([name, text]) =>
        `${text}，最大权重 ${fixed(values[name].max_weight, 3)}、梯度范数 ${fixed(values[name].grad_norm, 3)}`).join("；");
      this.show([], summary, changed);
      this.readout.dataset.values = JSON.stringify(values);
    }
  }

  window.AttnbookExplore.kinds.saturation = Saturation;
})();
