/* sagelaunch timeline: a canvas renderer for host -> device traces (interaction: timeline_interact.js).
 *
 * Data arrives columnar (base64 typed arrays, names dictionary-encoded; see profiler/timeline/payload.py).
 * Events are sorted by (track, start). Each track is split into lanes (nesting depth); within a lane
 * events never overlap, so a binary search finds the first visible one and the draw loop touches only
 * visible events. Events narrower than a pixel are merged into one box per pixel (level of detail),
 * so a frame costs O(visible pixels + visible wide events), not O(events).
 */
(function () {
  "use strict";
  const GUTTER = 230, LANE_H = 16, GROUP_H = 20, COUNTER_H = 34, RULER_H = 22, MAX_LANES = 12;
  const CAT_COLORS = {
    kernel: null, cuda_runtime: "#7a8ba6", cpu_op: "#9bb7d4", user_annotation: "#e6a23c",
    gpu_user_annotation: "#e6a23c", gpu_memcpy: "#67c23a", gpu_memset: "#2fb9a5", sync: "#f56c6c",
    step: "#b37feb",
  };

  function decode(col) {
    const bin = atob(col.b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const T = { f8: Float64Array, f4: Float32Array, i4: Int32Array, u1: Uint8Array, u2: Uint16Array }[col.dtype];
    return new T(bytes.buffer);
  }

  function hueColor(i) {
    const h = (i * 137.508) % 360;
    return "hsl(" + h.toFixed(0) + ",55%,58%)";
  }

  function fmtTime(us) {
    const a = Math.abs(us);
    if (a >= 1e6) return (us / 1e6).toFixed(3) + " s";
    if (a >= 1e3) return (us / 1e3).toFixed(3) + " ms";
    return us.toFixed(3) + " µs";
  }

  function Timeline(root, payload, opts) {
    opts = opts || {};
    this.root = root;
    this.p = payload;
    this.names = payload.names;
    this.cats = payload.cats;
    const ev = payload.events;
    this.n = ev.n;
    this.track = decode(ev.track); this.start = decode(ev.start); this.dur = decode(ev.dur);
    this.name = decode(ev.name); this.cat = decode(ev.cat); this.link = decode(ev.link);
    this.corr = decode(ev.corr);
    this.fields = {}; // extra per-event columns for the selection panel (rank, external_id, bytes…); -1 = none
    for (const [k, col] of Object.entries(ev.fields || {})) this.fields[k] = decode(col);
    this.tracks = payload.tracks.map((t) => Object.assign({}, t));
    this.counters = (payload.counters || []).map((c) => ({ track: c.track, unit: c.unit || "", max: c.max || 100, t: decode(c.t), v: decode(c.v) }));
    this.steps = payload.steps || [];
    this.frameMs = []; this.selected = -1; this.hover = -1;
    // per-frame positions of drawn linked events, for arrows; preallocated so frames do not allocate
    this.posMax = 4000; this.posIdx = new Int32Array(this.posMax); this.posX = new Float32Array(this.posMax);
    this.posY = new Float32Array(this.posMax); this.posN = 0; this.slotOf = new Int32Array(this.n).fill(-1);
    this.nameColor = new Array(this.names.length);
    this._buildLanes();
    this._buildTree();
    this._buildDom();
    this.span = Math.max(payload.span_us || 1, 1);
    this.view = { t0: 0, t1: this.span };
    this.scrollY = 0;
    this._bind();
    this.resize();
  }

  Timeline.prototype._buildLanes = function () {
    // lanes[track] = array of Int32Array of event indices, each sorted by start and non-overlapping
    const ends = [];
    for (const t of this.tracks) { t.lanes = []; t.first = -1; t.last = -1; }
    const laneLists = this.tracks.map(() => []);
    let cur = -1, stack = [];
    for (let i = 0; i < this.n; i++) {
      const tr = this.track[i];
      if (tr !== cur) { cur = tr; stack = []; this.tracks[tr].first = i; }
      this.tracks[tr].last = i;
      const s = this.start[i], e = s + this.dur[i];
      while (stack.length && stack[stack.length - 1] <= s) stack.pop();
      let depth = Math.min(stack.length, MAX_LANES - 1);
      stack.push(e);
      const lists = laneLists[tr];
      while (lists.length <= depth) lists.push([]);
      // a capped lane may receive overlapping events; push to the lane only when it does not overlap
      const lane = lists[depth];
      if (lane.length && this.start[lane[lane.length - 1]] + this.dur[lane[lane.length - 1]] > s && depth === MAX_LANES - 1) continue;
      lane.push(i);
    }
    this.tracks.forEach((t, k) => {
      t.lanes = laneLists[k].map((l) => Int32Array.from(l));
      t.laneEnds = t.lanes.map((l) => { const a = new Float64Array(l.length); for (let j = 0; j < l.length; j++) a[j] = this.start[l[j]] + this.dur[l[j]]; return a; });
    });
    this.laneOf = new Int8Array(this.n);
    this.tracks.forEach((t) => t.lanes.forEach((l, d) => { for (let j = 0; j < l.length; j++) this.laneOf[l[j]] = d; }));
    this._buildLevels();
  };

  Timeline.prototype._buildLevels = function () {
    // Level of detail, precomputed per lane: at a granularity g (µs), events shorter than g are merged
    // into runs wherever the gap between them is under g, and longer events stay individual. When one
    // pixel covers >= g, drawing the runs looks exactly like drawing every event, at a fraction of the cost.
    const span = Math.max(this.p.span_us || 1, 1);
    const grains = [span / 512, span / 4096, span / 32768, span / 262144];
    for (const t of this.tracks) {
      t.levels = t.lanes.map((lane) => grains.map((g) => {
        const longIdx = [], runS = [], runE = [];
        let rs = -1, re = -1;
        for (let j = 0; j < lane.length; j++) {
          const i = lane[j], s = this.start[i], e = s + this.dur[i];
          if (this.dur[i] >= g) { longIdx.push(i); continue; }
          if (rs >= 0 && s - re < g) { if (e > re) re = e; }
          else { if (rs >= 0) { runS.push(rs); runE.push(re); } rs = s; re = e; }
        }
        if (rs >= 0) { runS.push(rs); runE.push(re); }
        const ends = new Float64Array(longIdx.length);
        longIdx.forEach((i, k) => { ends[k] = this.start[i] + this.dur[i]; });
        return { g: g, longIdx: Int32Array.from(longIdx), longEnds: ends, runS: Float64Array.from(runS), runE: Float64Array.from(runE) };
      }));
    }
  };

  Timeline.prototype._buildTree = function () {
    const walk = (node, depth) => {
      node.depth = depth; node.open = depth < 4;
      (node.children || []).forEach((c) => walk(c, depth + 1));
    };
    this.tree = this.p.tree;
    this.tree.forEach((n) => walk(n, 0));
  };

  Timeline.prototype._rows = function () {
    // visible rows top to bottom: {node, y, h}
    const rows = []; let y = RULER_H;
    const visit = (node) => {
      let h;
      if (node.track != null) {
        const t = this.tracks[node.track];
        h = t.kind === "counter" ? COUNTER_H : Math.max(1, t.lanes.length) * LANE_H + 4;
      } else h = GROUP_H;
      rows.push({ node: node, y: y, h: h }); y += h;
      if (node.open) (node.children || []).forEach(visit);
    };
    this.tree.forEach(visit);
    this.contentH = y;
    return rows;
  };

  Timeline.prototype._buildDom = function () {
    this.root.classList.add("tl-root");
    this.root.innerHTML =
      '<div class="tl-bar"><span class="tl-steps-label">Steps:</span><span class="tl-steps"></span>' +
      '<button class="tl-reset" title="Show everything (0)">Reset zoom</button>' +
      '<span class="tl-help">drag: pan · wheel: zoom · W/S zoom · A/D pan · click: select</span></div>' +
      '<div class="tl-main"><canvas class="tl-canvas" tabindex="0"></canvas>' +
      '<aside class="tl-panel"><h3>Selection</h3><div class="tl-sel">Click an event.</div></aside></div>';
    this.canvas = this.root.querySelector("canvas");
    this.ctx = this.canvas.getContext("2d", { alpha: false });
    this.panel = this.root.querySelector(".tl-sel");
    const stepsEl = this.root.querySelector(".tl-steps");
    this.steps.forEach((s, i) => {
      const b = document.createElement("button");
      b.className = "tl-step"; b.textContent = s.name; b.dataset.step = i;
      b.addEventListener("click", () => this.zoomToStep(i));
      stepsEl.appendChild(b);
    });
    if (!this.steps.length) stepsEl.textContent = "no step annotations in this profile";
    this.root.querySelector(".tl-reset").addEventListener("click", () => this.zoomTo(0, this.span));
  };

  Timeline.prototype.resize = function () {
    const r = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.w = Math.max(200, r.width); this.h = Math.max(200, r.height);
    this.canvas.width = Math.round(this.w * dpr); this.canvas.height = Math.round(this.h * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.draw();
  };

  Timeline.prototype.xOf = function (t) { return GUTTER + (t - this.view.t0) / (this.view.t1 - this.view.t0) * (this.w - GUTTER); };
  Timeline.prototype.tOf = function (x) { return this.view.t0 + (x - GUTTER) / (this.w - GUTTER) * (this.view.t1 - this.view.t0); };

  Timeline.prototype.zoomTo = function (a, b) {
    const minSpan = 0.01;
    if (b - a < minSpan) { const m = (a + b) / 2; a = m - minSpan / 2; b = m + minSpan / 2; }
    this.view = { t0: a, t1: b };
    this.requestDraw();
  };
  Timeline.prototype.zoomToStep = function (i) {
    const s = this.steps[i], pad = (s.end - s.start) * 0.02;
    this.zoomTo(s.start - pad, s.end + pad);
  };
  Timeline.prototype.zoomBy = function (factor, atX) {
    const t = this.tOf(atX == null ? (GUTTER + this.w) / 2 : atX);
    this.zoomTo(t - (t - this.view.t0) * factor, t + (this.view.t1 - t) * factor);
  };
  Timeline.prototype.panBy = function (frac) {
    const d = (this.view.t1 - this.view.t0) * frac;
    this.zoomTo(this.view.t0 + d, this.view.t1 + d);
  };

  Timeline.prototype.requestDraw = function () {
    if (this._raf) return;
    this._raf = requestAnimationFrame(() => { this._raf = 0; this.draw(); });
  };

  function lowerBound(arr, x) { let lo = 0, hi = arr.length; while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; } return lo; }

  Timeline.prototype._color = function (i) {
    const c = CAT_COLORS[this.cats[this.cat[i]]];
    if (c) return c;
    const nm = this.name[i];
    return this.nameColor[nm] || (this.nameColor[nm] = hueColor(nm));
  };

  Timeline.prototype.draw = function () {
    const t0 = performance.now();
    const ctx = this.ctx, W = this.w, H = this.h, v = this.view;
    ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, W, H);
    const rows = this._rows(); this.rowsCache = rows;
    const scale = (W - GUTTER) / (v.t1 - v.t0);
    for (let k = 0; k < this.posN; k++) this.slotOf[this.posIdx[k]] = -1;
    this.posN = 0;
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    for (const row of rows) {
      const y = row.y - this.scrollY;
      if (y + row.h < RULER_H || y > H) continue;
      const node = row.node;
      ctx.fillStyle = node.track == null ? "#f2f4f7" : "#ffffff";
      ctx.fillRect(0, y, W, row.h);
      ctx.strokeStyle = "#e4e7ed"; ctx.beginPath(); ctx.moveTo(0, y + row.h - 0.5); ctx.lineTo(W, y + row.h - 0.5); ctx.stroke();
      if (node.track != null) {
        const tr = this.tracks[node.track];
        if (tr.kind === "counter") this._drawCounter(tr, node.track, y, row.h, scale);
        else this._drawSlices(tr, y, scale);
      }
      // gutter label (drawn after, so it covers slices that start before the view)
      ctx.fillStyle = node.track == null ? "#f2f4f7" : "#fafafa"; ctx.fillRect(0, y, GUTTER, row.h - 1);
      ctx.fillStyle = "#303133";
      const indent = 6 + node.depth * 12;
      const mark = node.children && node.children.length ? (node.open ? "▾ " : "▸ ") : "";
      ctx.fillText(mark + node.label, indent, y + Math.min(row.h, GROUP_H) / 2);
    }
    this._drawArrows();
    this._drawRuler(scale);
    ctx.strokeStyle = "#c0c4cc"; ctx.beginPath(); ctx.moveTo(GUTTER - 0.5, 0); ctx.lineTo(GUTTER - 0.5, H); ctx.stroke();
    const ms = performance.now() - t0;
    this.frameMs.push(ms); if (this.frameMs.length > 500) this.frameMs.shift();
    this.lastFrameMs = ms;
  };

  Timeline.prototype._remember = function (i, x, y) {
    if (this.posN >= this.posMax || this.link[i] < 0) return;
    const k = this.posN++;
    this.posIdx[k] = i; this.posX[k] = x; this.posY[k] = y; this.slotOf[i] = k;
  };

  Timeline.prototype._drawSlices = function (tr, y, scale) {
    const v = this.view, pxUs = 1 / scale;
    for (let d = 0; d < tr.lanes.length; d++) {
      const ly = y + 2 + d * LANE_H;
      // the coarsest level whose merged gaps are still below one pixel, else every event
      let level = null;
      for (const L of tr.levels[d]) if (L.g <= pxUs) { level = L; break; }
      if (level) this._drawLevel(level, ly, scale);
      else this._drawLane(tr.lanes[d], tr.laneEnds[d], ly, scale);
    }
  };

  Timeline.prototype._drawLevel = function (L, ly, scale) {
    const ctx = this.ctx, v = this.view;
    ctx.fillStyle = "#8a9bb5";
    let bx0 = -1, bx1 = -1; // runs closer than a pixel are drawn as one box
    for (let j = lowerBound(L.runE, v.t0); j < L.runS.length && L.runS[j] <= v.t1; j++) {
      const x0 = Math.max(GUTTER, GUTTER + (L.runS[j] - v.t0) * scale), x1 = GUTTER + (L.runE[j] - v.t0) * scale;
      if (bx0 >= 0 && x0 <= bx1 + 1) { if (x1 > bx1) bx1 = x1; continue; }
      if (bx0 >= 0) ctx.fillRect(bx0, ly, Math.max(1, bx1 - bx0), LANE_H - 2);
      bx0 = x0; bx1 = x1;
    }
    if (bx0 >= 0) ctx.fillRect(bx0, ly, Math.max(1, bx1 - bx0), LANE_H - 2);
    this._drawLane(L.longIdx, L.longEnds, ly, scale);
  };

  Timeline.prototype._drawLane = function (lane, ends, ly, scale) {
    const ctx = this.ctx, v = this.view, W = this.w;
    {
      let j = lowerBound(ends, v.t0);
      let mergeX0 = -1, mergeX1 = -1; // pending sub-pixel box
      ctx.fillStyle = "#8a9bb5";
      for (; j < lane.length; j++) {
        const i = lane[j];
        const s = this.start[i];
        if (s > v.t1) break;
        let x0 = GUTTER + (s - v.t0) * scale, x1 = x0 + this.dur[i] * scale;
        if (x1 - x0 < 1) {
          // level of detail: merge sub-pixel events that fall into adjacent pixels
          if (mergeX0 >= 0 && x0 <= mergeX1 + 1) { if (x1 > mergeX1) mergeX1 = x1; }
          else {
            if (mergeX0 >= 0) { ctx.fillStyle = "#8a9bb5"; ctx.fillRect(mergeX0, ly, Math.max(1, mergeX1 - mergeX0), LANE_H - 2); }
            mergeX0 = x0; mergeX1 = x1;
          }
          this._remember(i, x0, ly + LANE_H / 2);
          continue;
        }
        if (x0 < GUTTER) x0 = GUTTER;
        if (x1 > W) x1 = W;
        ctx.fillStyle = this._color(i);
        ctx.fillRect(x0, ly, Math.max(1, x1 - x0 - 0.5), LANE_H - 2);
        if (x1 - x0 > 40) {
          ctx.fillStyle = "#1d1e1f";
          const label = this.names[this.name[i]];
          const maxChars = Math.floor((x1 - x0 - 6) / 6);
          ctx.fillText(label.length > maxChars ? label.slice(0, Math.max(0, maxChars - 1)) + "…" : label, x0 + 3, ly + LANE_H / 2 - 1);
        }
        this._remember(i, x0, ly + LANE_H / 2);
        if (i === this.selected) { ctx.strokeStyle = "#000"; ctx.lineWidth = 2; ctx.strokeRect(x0, ly, Math.max(2, x1 - x0), LANE_H - 2); ctx.lineWidth = 1; }
      }
      if (mergeX0 >= 0) { ctx.fillStyle = "#8a9bb5"; ctx.fillRect(mergeX0, ly, Math.max(1, mergeX1 - mergeX0), LANE_H - 2); }
    }
  };

  Timeline.prototype._drawCounter = function (tr, trackIdx, y, h, scale) {
    const c = this.counters.find((c) => c.track === trackIdx);
    if (!c || !c.t.length) return;
    const ctx = this.ctx, v = this.view;
    let j = Math.max(0, lowerBound(c.t, v.t0) - 1);
    ctx.fillStyle = "rgba(64,158,255,0.35)"; ctx.strokeStyle = "#409eff";
    ctx.beginPath(); ctx.moveTo(Math.max(GUTTER, this.xOf(c.t[j])), y + h - 2);
    let lastX = -1;
    for (; j < c.t.length; j++) {
      const x = Math.max(GUTTER, GUTTER + (c.t[j] - v.t0) * scale);
      const yy = y + h - 2 - (h - 6) * Math.min(1, c.v[j] / c.max);
      if (x - lastX >= 0.5 || j === c.t.length - 1) { ctx.lineTo(x, yy); lastX = x; }
      if (c.t[j] > v.t1) break;
    }
    ctx.lineTo(Math.min(this.w, lastX), y + h - 2); ctx.closePath(); ctx.fill();
    ctx.fillStyle = "#606266"; ctx.fillText("max " + c.max + c.unit, this.w - 70, y + 8);
  };

  Timeline.prototype._drawArrows = function () {
    // arrows launch -> kernel; all of them when few are visible, else only the selection's
    const ctx = this.ctx;
    const pairs = [];
    if (this.posN < 600) {
      for (let a = 0; a < this.posN; a++) {
        const i = this.posIdx[a], b = this.slotOf[this.link[i]];
        if (b >= 0 && this.cats[this.cat[i]] === "cuda_runtime") pairs.push([[this.posX[a], this.posY[a]], [this.posX[b], this.posY[b]]]);
      }
    }
    const sel = this.selected;
    if (sel >= 0 && this.link[sel] >= 0) {
      const a = this._eventPos(sel), b = this._eventPos(this.link[sel]);
      if (a && b) pairs.push(this.cats[this.cat[sel]] === "cuda_runtime" ? [a, b, 1] : [b, a, 1]);
    }
    for (const [a, b, strong] of pairs) {
      ctx.strokeStyle = strong ? "#d03050" : "rgba(80,80,80,0.45)"; ctx.lineWidth = strong ? 2 : 1;
      ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke();
      const ang = Math.atan2(b[1] - a[1], b[0] - a[0]);
      ctx.beginPath(); ctx.moveTo(b[0], b[1]);
      ctx.lineTo(b[0] - 7 * Math.cos(ang - 0.4), b[1] - 7 * Math.sin(ang - 0.4));
      ctx.lineTo(b[0] - 7 * Math.cos(ang + 0.4), b[1] - 7 * Math.sin(ang + 0.4));
      ctx.closePath(); ctx.fillStyle = ctx.strokeStyle; ctx.fill();
    }
    ctx.lineWidth = 1;
  };

  Timeline.prototype._eventPos = function (i) {
    const row = (this.rowsCache || []).find((r) => r.node.track === this.track[i]);
    if (!row) return null;
    const x = Math.min(Math.max(this.xOf(this.start[i]), GUTTER), this.w);
    return [x, row.y - this.scrollY + 2 + this.laneOf[i] * LANE_H + LANE_H / 2];
  };

  Timeline.prototype._drawRuler = function (scale) {
    const ctx = this.ctx, v = this.view;
    ctx.fillStyle = "#f5f7fa"; ctx.fillRect(0, 0, this.w, RULER_H);
    const spanUs = v.t1 - v.t0, target = spanUs / 8;
    const pow = Math.pow(10, Math.floor(Math.log10(target)));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= target) || pow * 10;
    ctx.fillStyle = "#606266"; ctx.strokeStyle = "#dcdfe6";
    for (let t = Math.ceil(v.t0 / step) * step; t <= v.t1; t += step) {
      const x = GUTTER + (t - v.t0) * scale;
      ctx.beginPath(); ctx.moveTo(x, RULER_H - 6); ctx.lineTo(x, RULER_H); ctx.stroke();
      ctx.fillText(fmtTime(t), x + 2, 8);
    }
    ctx.fillText("view " + fmtTime(spanUs), 6, 11);
  };

  Timeline.util = { lowerBound: lowerBound, fmtTime: fmtTime, GUTTER: GUTTER, LANE_H: LANE_H };
  window.SageTimeline = Timeline;
})();
