// The scaling figure's controls: an explore.js kind (book/_ext/resolving/figures.py adds it inline).
(() => {
  "use strict";
  const { T, fixed, el, rowsOf, Explorable } = window.AttnbookExplore;

  // The shape walkthrough's weights under three divisors (attention.md).
  class Scaling extends Explorable {
    constructor(box) {
      super(box);
      const { d_k: dk, d_model: dm } = this.inputs;
      this.radios("缩放分母", "scale", [
        ["d_k", `除以 √d_k = √${dk}（正确做法）`], ["d_model", `除以 √输入宽度 = √${dm}（偏大的分母）`],
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
      const name = { d_k: "除以 √d_k", d_model: "除以 √输入宽度", none: "不缩放" }[this.state.scale];
      const summary = `${name}：查询位置 ${this.state.row} 的权重 ${row.map((v) => fixed(v, 3)).join("、")}；`
        + `最大权重 ${fixed(max, 3)}；熵 ${fixed(entropy, 3)} nat（权重越分散熵越大：均匀分布为 ${fixed(Math.log(row.length), 3)}，全给一个键为 0）`;
      this.show([values], summary, changed);
      Object.assign(this.readout.dataset, { max: String(max), entropy: String(entropy) });
    }
  }


  window.AttnbookExplore.kinds.scaling = Scaling;
})();
