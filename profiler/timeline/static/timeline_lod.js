/* sagelaunch timeline, level of detail: lanes, precomputed detail levels and the batched slice renderer.
 * Extends window.SageTimeline (timeline.js); load this file after it.
 *
 * A frame costs O(pixels on screen), not O(events):
 * - each track is split into lanes (nesting depth) of non-overlapping events sorted by start, so a binary
 *   search finds the visible range of a lane;
 * - events at least a pixel wide are drawn one by one in their colour (at most a few per pixel column);
 * - narrower events are summed into per-pixel-column coverage (busy time / pixel time) and drawn as runs of
 *   columns in four shades, so a lone 1 µs kernel stays visible and a saturated stream reads as solid;
 * - when a lane has more visible events than pixel columns, the coverage comes from a precomputed level:
 *   short events pre-summed into bins of at most half a pixel, plus the list of the level's long events;
 * - rectangles are queued per colour and flushed colour by colour (one fillStyle per colour; fillRect measured
 *   ~20 % faster than one rect() path per colour in Chromium), and the queues, coverage columns and label
 *   cache live across frames so a frame allocates nothing.
 */
(function () {
  "use strict";
  const Timeline = window.SageTimeline;
  const { lowerBound, GUTTER, LANE_H, MAX_LANES } = Timeline.util;
  const CAT_COLORS = {
    kernel: null, cuda_runtime: "#7a8ba6", cpu_op: "#9bb7d4", user_annotation: "#e6a23c",
    gpu_user_annotation: "#e6a23c", gpu_memcpy: "#67c23a", gpu_memset: "#2fb9a5", sync: "#f56c6c",
    step: "#b37feb",
  };
  // coverage shades: #8a9bb5 over white at 35/55/78/100 % (opaque, so the canvas never blends)
  const COVERAGE = [0.35, 0.55, 0.78, 1].map((a) => {
    const mix = (c) => Math.round(255 + (c - 255) * a);
    return "rgb(" + mix(0x8a) + "," + mix(0x9b) + "," + mix(0xb5) + ")";
  });
  const LEVEL_BASE = 512, LEVEL_STEP = 4; // level k merges events shorter than span / (512 * 4^k)

  function hueColor(i) { return "hsl(" + ((i * 137.508) % 360).toFixed(0) + ",55%,58%)"; }

  /* ---------- build (once per profile) ---------- */

  Timeline.prototype._buildLanes = function () {
    const n = this.n, start = this.start, dur = this.dur;
    const laneLists = this.tracks.map(() => []);
    for (const t of this.tracks) { t.first = -1; t.last = -1; }
    this.laneOf = new Int8Array(n).fill(-1); // -1: hidden under MAX_LANES (overlaps its capped lane)
    let cur = -1, stack = [];
    for (let i = 0; i < n; i++) {
      const tr = this.track[i];
      if (tr !== cur) { cur = tr; stack = []; this.tracks[tr].first = i; }
      this.tracks[tr].last = i;
      const s = start[i], e = s + dur[i];
      while (stack.length && stack[stack.length - 1] <= s) stack.pop();
      const depth = Math.min(stack.length, MAX_LANES - 1);
      stack.push(e);
      const lists = laneLists[tr];
      while (lists.length <= depth) lists.push([]);
      const lane = lists[depth];
      if (depth === MAX_LANES - 1 && lane.length) { const p = lane[lane.length - 1]; if (start[p] + dur[p] > s) continue; }
      lane.push(i);
      this.laneOf[i] = depth;
    }
    this.tracks.forEach((t, k) => {
      t.lanes = laneLists[k].map((l) => Int32Array.from(l));
      t.laneStarts = t.lanes.map((l) => Float64Array.from(l, (i) => start[i]));
      t.laneEnds = t.lanes.map((l) => Float64Array.from(l, (i) => start[i] + dur[i]));
      t.levels = t.lanes.map((l, d) => this._buildLevels(l, t.laneStarts[d], t.laneEnds[d]));
    });
    this._buildColors();
  };

  Timeline.prototype._buildLevels = function (lane, starts, ends) {
    // level k: events shorter than g pre-summed per bin of width g (bin = floor(start / g)), longer ones listed.
    // Levels stop where they would not be much smaller than the lane itself.
    const span = Math.max(this.p.span_us || 1, 1), levels = [];
    for (let g = span / LEVEL_BASE; lane.length > 64; g /= LEVEL_STEP) {
      const binT = [], binE = [], binBusy = [], longIdx = [];
      let bin = -Infinity;
      for (let j = 0; j < lane.length; j++) {
        const s = starts[j], d = ends[j] - s;
        if (d >= g) { longIdx.push(j); continue; }
        const b = Math.floor(s / g);
        if (b === bin) { binBusy[binBusy.length - 1] += d; binE[binE.length - 1] = ends[j]; }
        else { bin = b; binT.push(s); binE.push(ends[j]); binBusy.push(d); }
      }
      if (binT.length + longIdx.length > lane.length / 2) break;
      const li = Int32Array.from(longIdx);
      levels.push({ g: g, binT: Float64Array.from(binT), binE: Float64Array.from(binE), binBusy: Float32Array.from(binBusy), longJ: li,
        longS: Float64Array.from(li, (j) => starts[j]), longE: Float64Array.from(li, (j) => ends[j]) });
    }
    return levels; // coarsest first
  };

  Timeline.prototype._buildColors = function () {
    // one palette index per event; the palette is the list of fill styles the batches are keyed by
    this.palette = COVERAGE.slice();
    const byStyle = new Map(this.palette.map((s, k) => [s, k]));
    const key = (style) => { let k = byStyle.get(style); if (k == null) { k = this.palette.length; this.palette.push(style); byStyle.set(style, k); } return k; };
    const catKey = this.cats.map((c) => (CAT_COLORS[c] ? key(CAT_COLORS[c]) : -1));
    const nameKey = new Int32Array(this.names.length).fill(-1);
    this.colorKey = new Uint16Array(this.n);
    for (let i = 0; i < this.n; i++) {
      let k = catKey[this.cat[i]];
      if (k < 0) { const nm = this.name[i]; k = nameKey[nm]; if (k < 0) k = nameKey[nm] = key(hueColor(nm)); }
      this.colorKey[i] = k;
    }
    this.batchN = new Int32Array(this.palette.length);
    this.batchBuf = this.palette.map(() => new Float32Array(256)); // x, y, w, h per queued rectangle
    this.batchUsed = new Int32Array(this.palette.length); this.batchUsedN = 0;
    this.labelMax = 2048; this.labelIdx = new Int32Array(this.labelMax); this.labelX = new Float32Array(this.labelMax);
    this.labelY = new Float32Array(this.labelMax); this.labelChars = new Int32Array(this.labelMax); this.labelN = 0;
    this.labelCache = new Map();
    this.stats = { rects: 0, styles: 0, coverageRects: 0, events: 0, levelLanes: 0, exactLanes: 0 };
  };

  Timeline.prototype._ensureColumns = function (cols) {
    if (!this.colBusy || this.colBusy.length < cols) this.colBusy = new Float64Array(cols + 64);
  };

  /* ---------- per frame ---------- */

  Timeline.prototype._queue = function (k, x, y, w, h) {
    let n = this.batchN[k], buf = this.batchBuf[k];
    if (n === 0) this.batchUsed[this.batchUsedN++] = k;
    if (n + 4 > buf.length) { const b = new Float32Array(buf.length * 2); b.set(buf); this.batchBuf[k] = buf = b; } // grows, then reused
    buf[n] = x; buf[n + 1] = y; buf[n + 2] = w; buf[n + 3] = h; this.batchN[k] = n + 4;
  };

  Timeline.prototype._beginSlices = function () {
    this.batchUsedN = 0; this.labelN = 0;
    const st = this.stats; st.rects = 0; st.styles = 0; st.events = 0; st.levelLanes = 0; st.exactLanes = 0; st.coverageRects = 0;
    this._ensureColumns(Math.ceil(this.w - GUTTER) + 2);
  };

  Timeline.prototype._drawSlices = function (tr, y, scale) {
    const v = this.view, cols = Math.ceil(this.w - GUTTER), pxUs = 1 / scale;
    for (let d = 0; d < tr.lanes.length; d++) {
      const ly = y + 2 + d * LANE_H;
      const starts = tr.laneStarts[d], ends = tr.laneEnds[d];
      const j0 = lowerBound(ends, v.t0), j1 = lowerBound(starts, v.t1 + 1e-9);
      if (j1 <= j0) continue;
      let level = null;
      if (j1 - j0 > 2 * cols) for (const L of tr.levels[d]) if (L.g <= pxUs / 2) { level = L; break; }
      if (level) this._laneFromLevel(tr, d, level, ly, scale, cols);
      else this._laneExact(tr, d, j0, j1, ly, scale, cols);
    }
  };

  Timeline.prototype._laneExact = function (tr, d, j0, j1, ly, scale, cols) {
    // every visible event: wide ones queued in their colour, sub-pixel ones summed into coverage columns
    const v = this.view, lane = tr.lanes[d], starts = tr.laneStarts[d], ends = tr.laneEnds[d];
    let cMin = cols, cMax = -1;
    this.stats.exactLanes++; this.stats.events += j1 - j0;
    for (let j = j0; j < j1; j++) {
      const s = starts[j], e = ends[j], i = lane[j];
      const w = (e - s) * scale;
      let x0 = GUTTER + (s - v.t0) * scale;
      if (w < 1) {
        const c = this._cover(x0 - GUTTER, w, w, cols); if (c < cMin) cMin = c; if (c + 1 > cMax) cMax = c + 1;
      } else this._queueWide(i, x0, x0 + w, ly);
      if (this.link[i] >= 0) this._remember(i, x0, ly + LANE_H / 2);
    }
    if (cMax >= 0) this._flushColumns(cMin, cMax, ly);
  };

  Timeline.prototype._laneFromLevel = function (tr, d, L, ly, scale, cols) {
    // pre-summed bins (each under half a pixel) plus the level's long events, read in the visible range only
    const v = this.view, lane = tr.lanes[d];
    let cMin = cols, cMax = -1;
    this.stats.levelLanes++;
    const binT = L.binT, binBusy = L.binBusy;
    let j = lowerBound(binT, v.t0 - L.g);
    const jEnd = lowerBound(binT, v.t1 + 1e-9);
    this.stats.events += jEnd - j;
    const binE = L.binE;
    for (; j < jEnd; j++) {
      const x = (binT[j] - v.t0) * scale;
      const c = this._cover(x, (binE[j] - binT[j]) * scale, binBusy[j] * scale, cols);
      if (c < cMin) cMin = c; if (c + 1 > cMax) cMax = c + 1;
    }
    const longS = L.longS, longE = L.longE, longJ = L.longJ;
    const k1 = lowerBound(longS, v.t1 + 1e-9);
    for (let k = lowerBound(longE, v.t0); k < k1; k++) {
      const s = longS[k], w = (longE[k] - s) * scale;
      let x0 = GUTTER + (s - v.t0) * scale;
      if (w < 1) {
        const c = this._cover(x0 - GUTTER, w, w, cols); if (c < cMin) cMin = c; if (c + 1 > cMax) cMax = c + 1;
        continue;
      }
      this._queueWide(lane[longJ[k]], x0, x0 + w, ly);
    }
    if (cMax >= 0) this._flushColumns(cMin, cMax, ly);
  };

  Timeline.prototype._queueWide = function (i, x0, x1, ly) {
    // an event at least a pixel wide, snapped to whole pixels (crisp, and no anti-aliased edges to raster),
    // with a 1 px gap after it when it is wide enough to spare one; a label when it has room
    if (x0 < GUTTER) x0 = GUTTER; if (x1 > this.w) x1 = this.w;
    const a = Math.round(x0), b = Math.round(x1);
    const w = b - a >= 3 ? b - a - 1 : Math.max(1, b - a);
    this._queue(this.colorKey[i], a, ly, w, LANE_H - 2);
    if (w > 40) this._queueLabel(i, a, ly, w);
  };

  Timeline.prototype._cover = function (x, w, busyPx, cols) {
    // adds busyPx of coverage for an extent [x, x + w) at most a pixel wide (x from the gutter's edge);
    // one straddling a column boundary is split between both columns. Returns the first column touched.
    const busy = this.colBusy;
    let c = Math.floor(x);
    if (c < 0) c = 0; else if (c >= cols - 1) { busy[cols - 1] += busyPx; return cols - 1; }
    const inFirst = c + 1 - x;
    if (w > inFirst && w > 0) { const f = inFirst / w; busy[c] += busyPx * f; busy[c + 1] += busyPx * (1 - f); }
    else busy[c] += busyPx;
    return c;
  };

  Timeline.prototype._flushColumns = function (cMin, cMax, ly) {
    // runs of adjacent columns with the same coverage shade -> one rectangle each; clears the columns it read
    const busy = this.colBusy;
    let runC = -1, runShade = -1;
    if (cMax > this.w - GUTTER) cMax = Math.ceil(this.w - GUTTER);
    for (let c = cMin; c <= cMax + 1; c++) {
      let shade = -1;
      if (c <= cMax) { const f = busy[c]; busy[c] = 0; if (f > 0) shade = f < 0.25 ? 0 : f < 0.5 ? 1 : f < 0.75 ? 2 : 3; }
      if (shade !== runShade) {
        if (runShade >= 0) this._queue(runShade, GUTTER + runC, ly, c - runC, LANE_H - 2);
        runC = c; runShade = shade;
      }
    }
  };

  Timeline.prototype._queueLabel = function (i, x0, ly, w) {
    if (this.labelN >= this.labelMax) return;
    const k = this.labelN++;
    this.labelIdx[k] = i; this.labelX[k] = x0 + 3; this.labelY[k] = ly + LANE_H / 2 - 1;
    this.labelChars[k] = Math.min(1023, Math.floor((w - 6) / 6)); // ~6 px per character at 11 px: no measureText
  };

  Timeline.prototype._label = function (nameIdx, chars) {
    // truncated labels are cached by (name, length): no string building in steady frames
    const key = nameIdx * 1024 + chars;
    let s = this.labelCache.get(key);
    if (s === undefined) {
      const full = this.names[nameIdx];
      s = full.length > chars ? full.slice(0, Math.max(0, chars - 1)) + "…" : full;
      if (this.labelCache.size > 20000) this.labelCache.clear();
      this.labelCache.set(key, s);
    }
    return s;
  };

  Timeline.prototype._endSlices = function () {
    // one path and one fillStyle per colour, then the labels in one colour
    const ctx = this.ctx, st = this.stats;
    for (let u = 0; u < this.batchUsedN; u++) {
      const k = this.batchUsed[u], buf = this.batchBuf[k], n = this.batchN[k];
      ctx.fillStyle = this.palette[k];
      for (let r = 0; r < n; r += 4) ctx.fillRect(buf[r], buf[r + 1], buf[r + 2], buf[r + 3]);
      st.rects += n >> 2; st.styles++; if (k < COVERAGE.length) st.coverageRects += n >> 2;
      this.batchN[k] = 0;
    }
    if (this.labelN) {
      ctx.fillStyle = "#1d1e1f";
      for (let k = 0; k < this.labelN; k++) ctx.fillText(this._label(this.name[this.labelIdx[k]], this.labelChars[k]), this.labelX[k], this.labelY[k]);
    }
  };
})();
