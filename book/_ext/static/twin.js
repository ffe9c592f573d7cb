// A JavaScript twin of attnbook's math (book/_ext/resolving/figures.py adds it inline to the pages
// with explorable figures only). Matrices are {rows, cols, data: Float64Array}, row-major.
// The twin computes in float64; tests/test_twin_browser.py runs it on the package's
// fixtures and compares it with scaled_dot_product_attention and MiniMultiHeadAttention.
window.AttnbookTwin = (() => {
  "use strict";
  const matrix = (rows, cols, data) => ({ rows, cols, data: data || new Float64Array(rows * cols) });

  // x (n, d_in) · kernel (d_in, d_out) + bias (d_out): a Dense layer given as data.
  function project(x, kernel, bias) {
    if (x.cols !== kernel.rows) throw new Error(`project: x has ${x.cols} columns, kernel ${kernel.rows} rows`);
    const out = matrix(x.rows, kernel.cols);
    for (let i = 0; i < x.rows; i += 1) {
      for (let j = 0; j < kernel.cols; j += 1) {
        let s = bias ? bias[j] : 0;
        for (let t = 0; t < x.cols; t += 1) s += x.data[i * x.cols + t] * kernel.data[t * kernel.cols + j];
        out.data[i * out.cols + j] = s;
      }
    }
    return out;
  }

  // (n, d_model) into `heads` matrices (n, d_model / heads): head h takes columns h·depth….
  function splitHeads(x, heads) {
    if (x.cols % heads) throw new Error(`splitHeads: ${x.cols} columns do not split into ${heads} heads`);
    const depth = x.cols / heads;
    return Array.from({ length: heads }, (_, h) => {
      const out = matrix(x.rows, depth);
      for (let i = 0; i < x.rows; i += 1) {
        for (let j = 0; j < depth; j += 1) out.data[i * depth + j] = x.data[i * x.cols + h * depth + j];
      }
      return out;
    });
  }

  // The inverse of splitHeads: heads (n, depth) each, side by side into (n, heads · depth).
  function mergeHeads(parts) {
    const depth = parts[0].cols, out = matrix(parts[0].rows, depth * parts.length);
    parts.forEach((part, h) => {
      for (let i = 0; i < part.rows; i += 1) {
        for (let j = 0; j < depth; j += 1) out.data[i * out.cols + h * depth + j] = part.data[i * depth + j];
      }
    });
    return out;
  }

  // Q Kᵀ / divisor, (n_q, n_k); the divisor defaults to √d_k, d_k = the query's last dimension.
  function scores(q, k, divisor) {
    if (q.cols !== k.cols) throw new Error(`scores: d_k differs, query ${q.cols}, key ${k.cols}`);
    const d = divisor === undefined ? Math.sqrt(q.cols) : divisor;
    const out = matrix(q.rows, k.rows);
    for (let i = 0; i < q.rows; i += 1) {
      for (let j = 0; j < k.rows; j += 1) {
        let s = 0;
        for (let t = 0; t < q.cols; t += 1) s += q.data[i * q.cols + t] * k.data[j * k.cols + t];
        out.data[i * out.cols + j] = s / d;
      }
    }
    return out;
  }

  // Row-wise softmax; mask (n_q · n_k of 0/1, or null): 1 = may attend. Masked weights are
  // exactly 0, and a row with no allowed key is all zeros, never NaN.
  function maskedSoftmax(s, mask) {
    const out = matrix(s.rows, s.cols);
    for (let i = 0; i < s.rows; i += 1) {
      const row = i * s.cols;
      let top = -Infinity;
      for (let j = 0; j < s.cols; j += 1) if (!mask || mask[row + j]) top = Math.max(top, s.data[row + j]);
      if (top === -Infinity) continue; // fully masked: zeros
      let sum = 0;
      for (let j = 0; j < s.cols; j += 1) {
        const e = !mask || mask[row + j] ? Math.exp(s.data[row + j] - top) : 0;
        out.data[row + j] = e;
        sum += e;
      }
      for (let j = 0; j < s.cols; j += 1) out.data[row + j] /= sum;
    }
    return out;
  }

  // weights (n_q, n_k) · value (n_k, d_v).
  function matmul(a, b) {
    return project(a, b, null);
  }

  // One head: {output (n_q, d_v), weights (n_q, n_k)}.
  function attention(q, k, v, mask, divisor) {
    const weights = maskedSoftmax(scores(q, k, divisor), mask);
    return { output: v ? matmul(weights, v) : null, weights };
  }

  // MiniMultiHeadAttention on one sample: x (n_q, features), context (n_k, features) or
  // null; p = {wq, bq, wk, bk, wv, bv, wo, bo} (kernels as matrices, biases as arrays);
  // mask shared by every head. Returns {output (n_q, d_model) or null, weights: [per head]}.
  // divisor(depth) gives each head's divisor (√depth unless told otherwise); without wv
  // only the weights are computed.
  function multiHead(x, context, p, heads, mask, divisor) {
    const kv = context || x;
    const q = splitHeads(project(x, p.wq, p.bq), heads);
    const k = splitHeads(project(kv, p.wk, p.bk), heads);
    const v = p.wv ? splitHeads(project(kv, p.wv, p.bv), heads) : null;
    const each = q.map((qh, h) => attention(qh, k[h], v && v[h], mask, divisor && divisor(qh.cols)));
    const output = v ? project(mergeHeads(each.map((e) => e.output)), p.wo, p.bo) : null;
    return { output, weights: each.map((e) => e.weights) };
  }

  // Masks, as in attnbook.masks: 1 = may attend, (n_q · n_k).
  function mask(n, { length = n, causal = false } = {}) {
    const m = new Uint8Array(n * n);
    for (let i = 0; i < n; i += 1) for (let j = 0; j < n; j += 1) m[i * n + j] = j < length && (!causal || j <= i) ? 1 : 0;
    return m;
  }

  // Row statistics as attnbook.scaling.softmax_stats defines them (one row at a time).
  function rowStats(w, i) {
    let top = 0, entropy = 0;
    for (let j = 0; j < w.cols; j += 1) {
      const p = w.data[i * w.cols + j];
      top = Math.max(top, p);
      if (p > 0) entropy -= p * Math.log(p);
    }
    return { max: top, entropy };
  }

  // The gradient of sum(softmax(s) · upstream) with respect to s, row i: w ⊙ (u − w·u); its norm.
  function softmaxGradNorm(w, upstream, i) {
    let dot = 0, norm = 0;
    for (let j = 0; j < w.cols; j += 1) dot += w.data[i * w.cols + j] * upstream.data[i * w.cols + j];
    for (let j = 0; j < w.cols; j += 1) {
      const g = w.data[i * w.cols + j] * (upstream.data[i * w.cols + j] - dot);
      norm += g * g;
    }
    return Math.sqrt(norm);
  }

  // Base64 of little-endian float32 (as attnbook.pages.explorable writes it) to a matrix.
  function decode(text, rows, cols) {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const f32 = new Float32Array(bytes.buffer);
    return matrix(rows, cols === undefined ? f32.length / rows : cols, Float64Array.from(f32));
  }

  return { matrix, project, splitHeads, mergeHeads, scores, maskedSoftmax, matmul, attention,
           multiHead, mask, rowStats, softmaxGradNorm, decode };
})();
