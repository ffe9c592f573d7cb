// The masks figure's controls: an explore.js kind (book/_ext/resolving/figures.py adds it inline).
(() => {
  "use strict";
  const { T, fixed, el, rowsOf, mean, Explorable } = window.AttnbookExplore;

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
      else summary += `无掩码时填充位置的键平均分走 ${fixed(leak * 100, 1)}% 的权重；有掩码时恰好为 ${fixed(kept * 100, 1)}%。`;
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


  window.AttnbookExplore.kinds.masks = Masks;
})();
