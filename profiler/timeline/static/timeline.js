/* sagelaunch timeline: a canvas renderer for host -> device traces: view, rows, frame, counters, arrows, ruler.
 * Lanes, level of detail and the slice renderer: timeline_lod.js; interaction: timeline_interact.js
 * (load both after this file, before constructing a Timeline).
 *
 * Data arrives columnar (base64 typed arrays, names dictionary-encoded; see profiler/timeline/payload.py).
 * Events are sorted by (track, start). A frame costs O(pixels on screen), not O(events), and allocates
 * nothing in steady state: rows are rebuilt only when the tree folds, buffers live across frames.
 */
(function () {
  "use strict";
  const GUTTER = 230, LANE_H = 16, GROUP_H = 20, COUNTER_H = 34, RULER_H = 22, MAX_LANES = 12;

  function decode(col) {
    const bin = atob(col.b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const T = { f8: Float64Array, f4: Float32Array, i4: Int32Array, u1: Uint8Array, u2: Uint16Array }[col.dtype];
    return new T(bytes.buffer);
  }

  function fmtTime(us, res) {
    // a time in the unit its size asks for, with as many decimals as the resolution `res` (µs) needs: a tick every
    // 2 µs late in a trace reads "1.203006 s", not "1.203 s" again and again. Default: µs for times of a
    // millisecond or more, ns below.
    const a = Math.abs(us), unit = a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
    const r = res > 0 ? res : a >= 1e3 ? 1 : 1e-3;
    const decimals = Math.min(9, Math.max(0, Math.ceil(-Math.log10(r / unit) - 1e-9)));
    return (us / unit).toFixed(decimals) + (unit === 1e6 ? " s" : unit === 1e3 ? " ms" : " µs");
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
    this.counterOf = new Map(this.counters.map((c) => [c.track, c]));
    this.counters.forEach((c) => { c.label = "max " + c.max + c.unit; });
    this.steps = payload.steps || [];
    this.frameMs = []; this.selected = -1; this.hover = -1;
    // per-frame positions of drawn linked events, for arrows; preallocated so frames do not allocate
    this.posMax = 4000; this.posIdx = new Int32Array(this.posMax); this.posX = new Float32Array(this.posMax);
    this.posY = new Float32Array(this.posMax); this.posN = 0; this.slotOf = new Int32Array(this.n).fill(-1);
    this._buildLanes();
    this._buildTree();
    this._buildDom();
    this.span = Math.max(payload.span_us || 1, 1);
    this.view = { t0: 0, t1: this.span };
    this.scrollY = 0;
    this._bind();
    this.resize();
  }

  Timeline.prototype._buildTree = function () {
    const walk = (node, depth) => {
      node.depth = depth; node.open = depth < 4;
      (node.children || []).forEach((c) => walk(c, depth + 1));
    };
    this.tree = this.p.tree;
    this.tree.forEach((n) => walk(n, 0));
  };

  Timeline.prototype._rows = function () {
    // visible rows top to bottom: {node, y, h, text}; cached until the tree folds (invalidateRows)
    if (this.rowsCache && !this.rowsDirty) return this.rowsCache;
    const rows = []; let y = RULER_H;
    const visit = (node) => {
      let h;
      if (node.track != null) {
        const t = this.tracks[node.track];
        h = t.kind === "counter" ? COUNTER_H : Math.max(1, t.lanes.length) * LANE_H + 4;
      } else h = GROUP_H;
      const mark = node.children && node.children.length ? (node.open ? "▾ " : "▸ ") : "";
      rows.push({ node: node, y: y, h: h, text: mark + node.label }); y += h;
      if (node.open) (node.children || []).forEach(visit);
    };
    this.tree.forEach(visit);
    this.contentH = y;
    this.rowsCache = rows; this.rowsDirty = false;
    this.rowOfTrack = new Map();
    rows.forEach((r) => { if (r.node.track != null) this.rowOfTrack.set(r.node.track, r); });
    return rows;
  };
  Timeline.prototype.invalidateRows = function () { this.rowsDirty = true; this.requestDraw(); };

  Timeline.prototype._buildDom = function () {
    // one compact bar (step navigator, search, reset); the canvas takes the rest; a side panel with tabs
    this.root.classList.add("tl-root");
    this.root.innerHTML =
      '<div class="tl-bar"><span class="tl-stepnav"></span><span class="tl-search"></span>' +
      '<button class="tl-reset" title="Show everything (0)">Reset zoom</button>' +
      '<span class="tl-measure tl-muted">shift+drag to measure</span>' +
      '<span class="tl-help" title="drag: pan · wheel: zoom · shift+wheel: scroll · W/S zoom · A/D pan · [ / ]: previous / next step · shift+drag: measure · click: select · Esc: clear">drag · wheel · W/A/S/D · [ ] · click</span></div>' +
      '<div class="tl-main"><canvas class="tl-canvas" tabindex="0"></canvas>' +
      '<aside class="tl-panel"><nav class="tl-tabs"><button data-tab="sel" class="active">Selection</button><button data-tab="ann">Annotations</button>' +
      '<button data-tab="legend">Legend</button></nav><div class="tl-tab tl-sel" data-tab="sel">Click an event.</div>' +
      '<div class="tl-tab tl-ann" data-tab="ann" hidden></div><div class="tl-tab tl-legend" data-tab="legend" hidden></div></aside></div>';
    this.canvas = this.root.querySelector("canvas");
    this.ctx = this.canvas.getContext("2d", { alpha: false });
    this.panel = this.root.querySelector(".tl-sel");
    this.root.querySelectorAll(".tl-tabs button").forEach((b) => b.addEventListener("click", () => this.showTab(b.dataset.tab)));
    this.root.querySelector(".tl-reset").addEventListener("click", () => this.zoomTo(0, this.span));
    if (this._buildNav) this._buildNav(); // timeline_nav.js: step navigator, search, annotation list, legend
  };

  Timeline.prototype.showTab = function (tab) {
    this.root.querySelectorAll(".tl-tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
    this.root.querySelectorAll(".tl-tab").forEach((t) => { t.hidden = t.dataset.tab !== tab; });
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
    this.currentStep = i;
    this.zoomTo(s.start - pad, s.end + pad);
    if (this._stepChanged) this._stepChanged(i);
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

  Timeline.prototype.draw = function () {
    const t0 = performance.now();
    const ctx = this.ctx, W = this.w, H = this.h, v = this.view;
    const rows = this._rows();
    const scale = (W - GUTTER) / (v.t1 - v.t0);
    for (let k = 0; k < this.posN; k++) this.slotOf[this.posIdx[k]] = -1;
    this.posN = 0;
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    // visible rows only (rows are sorted by y): backgrounds, borders and slices go to the pixel buffer
    // right of the gutter (timeline_lod.js), which lands on the canvas in one piece; the rest is drawn on top
    const first = this._firstRow(rows, this.scrollY + RULER_H);
    let last = first;
    this._beginSlices();
    for (; last < rows.length && rows[last].y - this.scrollY <= H; last++) {
      const row = rows[last], y = row.y - this.scrollY, node = row.node;
      if (node.track == null) this._band(this.GROUP_BG, y, row.h);
      else if (this.tracks[node.track].kind !== "counter") this._drawSlices(this.tracks[node.track], y, scale);
      this._band(this.SEPARATOR, y + row.h - 1, 1);
    }
    this._endSlices();
    for (let r = first; r < last; r++) {
      const node = rows[r].node;
      if (node.track != null && this.tracks[node.track].kind === "counter") this._drawCounter(node.track, rows[r].y - this.scrollY, rows[r].h, scale);
    }
    if (this._drawStepBand) this._drawStepBand(scale);
    if (this._drawMatches) this._drawMatches(scale);
    this._drawSelection();
    if (this._drawMeasure) this._drawMeasure(scale);
    // gutter: one background, group rows, row borders, labels
    ctx.fillStyle = "#fafafa"; ctx.fillRect(0, RULER_H, GUTTER, H - RULER_H);
    ctx.fillStyle = "#f2f4f7";
    for (let r = first; r < last; r++) if (rows[r].node.track == null) ctx.fillRect(0, rows[r].y - this.scrollY, GUTTER, rows[r].h);
    ctx.fillStyle = "#e4e7ed";
    for (let r = first; r < last; r++) ctx.fillRect(0, rows[r].y - this.scrollY + rows[r].h - 1, GUTTER, 1);
    ctx.fillStyle = "#303133";
    for (let r = first; r < last; r++) {
      const row = rows[r], y = row.y - this.scrollY;
      ctx.fillText(row.text, 6 + row.node.depth * 12, y + Math.min(row.h, GROUP_H) / 2);
    }
    this._drawArrows();
    this._drawRuler(scale);
    ctx.strokeStyle = "#c0c4cc"; ctx.beginPath(); ctx.moveTo(GUTTER - 0.5, 0); ctx.lineTo(GUTTER - 0.5, H); ctx.stroke();
    const ms = performance.now() - t0;
    this.frameMs.push(ms); if (this.frameMs.length > 500) this.frameMs.shift();
    this.lastFrameMs = ms;
  };

  Timeline.prototype._firstRow = function (rows, yTop) {
    // first row whose bottom is below yTop (content coordinates)
    let lo = 0, hi = rows.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (rows[m].y + rows[m].h <= yTop) lo = m + 1; else hi = m; }
    return lo;
  };

  Timeline.prototype._drawSelection = function () {
    // the selected event's outline, wherever it is (also inside a coverage run)
    const i = this.selected;
    if (i < 0) return;
    const p = this._eventPos(i);
    if (!p) return;
    const v = this.view, scale = (this.w - GUTTER) / (v.t1 - v.t0);
    const x0 = Math.max(GUTTER, GUTTER + (this.start[i] - v.t0) * scale);
    const x1 = Math.min(this.w, GUTTER + (this.start[i] + this.dur[i] - v.t0) * scale);
    if (x1 < GUTTER || x0 > this.w) return;
    const ctx = this.ctx;
    ctx.strokeStyle = "#000"; ctx.lineWidth = 2;
    ctx.strokeRect(x0, p[1] - LANE_H / 2, Math.max(2, x1 - x0), LANE_H - 2); ctx.lineWidth = 1;
  };

  Timeline.prototype._remember = function (i, x, y) {
    if (this.posN >= this.posMax || this.link[i] < 0) return;
    const k = this.posN++;
    this.posIdx[k] = i; this.posX[k] = x; this.posY[k] = y; this.slotOf[i] = k;
  };

  Timeline.prototype._drawCounter = function (trackIdx, y, h, scale) {
    const c = this.counterOf.get(trackIdx);
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
    ctx.fillStyle = "#606266"; ctx.fillText(c.label, this.w - 70, y + 8);
  };

  const ARROW = "#00b8d9", ARROW_FAINT = "rgba(0,184,217,0.45)"; // cyan, as the SageMaker Profiler's timeline

  Timeline.prototype._drawArrows = function () {
    // arrows launch -> kernel between events drawn one by one this frame (when few), plus the selection's
    const ctx = this.ctx;
    this.edgeMarker = null;
    if (this.posN < 600) {
      let any = false;
      ctx.beginPath();
      for (let a = 0; a < this.posN; a++) {
        const i = this.posIdx[a], b = this.slotOf[this.link[i]];
        if (b < 0 || this.cats[this.cat[i]] !== "cuda_runtime") continue;
        this._arrowPath(this.posX[a], this.posY[a], this.posX[b], this.posY[b]); any = true;
      }
      if (any) { ctx.strokeStyle = ctx.fillStyle = ARROW_FAINT; ctx.lineWidth = 1; ctx.stroke(); ctx.fill(); }
    }
    const sel = this.selected;
    if (sel < 0 || this.link[sel] < 0) return;
    const other = this.link[sel];
    let a = this._eventPos(sel, true), b = this._eventPos(other, true);
    if (!a || !b) return;
    const off = (p) => p[0] < GUTTER || p[0] > this.w || p[1] < RULER_H || p[1] > this.h;
    if (off(b)) { this._edgeMarker(other, b); b = this._clampPos(b); }
    if (off(a)) a = this._clampPos(a);
    if (this.cats[this.cat[sel]] !== "cuda_runtime") { const t = a; a = b; b = t; }
    ctx.beginPath(); this._arrowPath(a[0], a[1], b[0], b[1]);
    ctx.strokeStyle = ctx.fillStyle = ARROW; ctx.lineWidth = 2; ctx.stroke(); ctx.fill(); ctx.lineWidth = 1;
  };

  Timeline.prototype._clampPos = function (p) {
    return [Math.min(Math.max(p[0], GUTTER + 8), this.w - 8), Math.min(Math.max(p[1], RULER_H + 8), this.h - 8)];
  };

  Timeline.prototype._edgeMarker = function (i, p) {
    // the partner is off screen: a marker on the edge towards it, with its distance; a click jumps to it
    const ctx = this.ctx, [x, y] = this._clampPos(p), left = p[0] < GUTTER, right = p[0] > this.w;
    const dt = this.start[i] < this.view.t0 ? this.view.t0 - this.start[i] : this.start[i] > this.view.t1 ? this.start[i] - this.view.t1 : 0;
    const text = (this.cats[this.cat[i]] === "cuda_runtime" ? "launch" : "kernel") + (dt ? " " + fmtTime(dt) + (left ? " ←" : " →") : (p[1] < RULER_H ? " ↑" : " ↓"));
    const w = 10 + text.length * 6, bx = left ? GUTTER + 2 : right ? this.w - w - 2 : Math.min(x, this.w - w - 2), by = y - 9;
    ctx.fillStyle = ARROW; ctx.fillRect(bx, by, w, 18);
    ctx.fillStyle = "#fff"; ctx.fillText(text, bx + 5, y);
    this.edgeMarker = { x0: bx, y0: by, x1: bx + w, y1: by + 18, index: i };
  };

  Timeline.prototype._arrowPath = function (ax, ay, bx, by) {
    // a line and a closed head, added to the current path (stroke draws the line, fill the head)
    const ctx = this.ctx, ang = Math.atan2(by - ay, bx - ax);
    ctx.moveTo(ax, ay); ctx.lineTo(bx, by);
    ctx.lineTo(bx - 7 * Math.cos(ang - 0.4), by - 7 * Math.sin(ang - 0.4));
    ctx.lineTo(bx - 7 * Math.cos(ang + 0.4), by - 7 * Math.sin(ang + 0.4));
    ctx.closePath();
  };

  Timeline.prototype._eventPos = function (i, raw) {
    // screen position of an event's start; clamped to the slice area unless raw (then it may lie off screen)
    const row = this.rowOfTrack && this.rowOfTrack.get(this.track[i]);
    if (!row) return null;
    const x = raw ? this.xOf(this.start[i]) : Math.min(Math.max(this.xOf(this.start[i]), GUTTER), this.w);
    return [x, row.y - this.scrollY + 2 + Math.max(0, this.laneOf[i]) * LANE_H + LANE_H / 2];
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
      ctx.fillText(fmtTime(t, step), x + 2, 8);
    }
    ctx.fillText("view " + fmtTime(spanUs, step), 6, 11);
  };

  Timeline.util = { lowerBound: lowerBound, fmtTime: fmtTime, GUTTER: GUTTER, LANE_H: LANE_H, MAX_LANES: MAX_LANES, RULER_H: RULER_H };
  window.SageTimeline = Timeline;
})();
