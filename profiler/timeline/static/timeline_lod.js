/* sagelaunch timeline, level of detail: lanes, precomputed detail levels and the slice renderer.
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
 * - slices are painted as whole-pixel spans into one reused RGBA buffer (a lane's spans into its first pixel
 *   row, copied down the lane's height) and put on the canvas with one putImageData: thousands of canvas
 *   fills cost more to record and rasterise than the spans cost to write (measured in Chromium: 5 ms of
 *   fillRect per zoomed-out frame, batched by colour). Text, counters, arrows and the selection are drawn
 *   on top with the canvas API. Buffers, coverage columns and the label cache live across frames, so a
 *   frame allocates nothing.
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
  Timeline.util.CAT_COLORS = CAT_COLORS; // for the legend (timeline_nav.js)
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
    // one palette index per event into the list of colours (CSS, and as RGBA words for the pixel buffer)
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
    this.paletteRGBA = cssToRGBA(this.palette);
    [this.WHITE, this.GROUP_BG, this.SEPARATOR] = cssToRGBA(["#ffffff", "#f2f4f7", "#e4e7ed"]);
    this.labelMax = 2048; this.labelIdx = new Int32Array(this.labelMax); this.labelX = new Float32Array(this.labelMax);
    this.labelY = new Float32Array(this.labelMax); this.labelChars = new Int32Array(this.labelMax); this.labelN = 0;
    this.labelCache = new Map();
    this.wide = new Float64Array(3 * 1024); this.wideN = 0; // a lane's wide events: colour, x, width
    this.stats = { rects: 0, styles: 0, coverageRects: 0, events: 0, levelLanes: 0, exactLanes: 0 };
  };

  function cssToRGBA(styles) {
    // each CSS colour as the 32-bit word the canvas stores for it (endianness-proof: read back from a canvas)
    const c = document.createElement("canvas"); c.width = c.height = 1;
    const g = c.getContext("2d", { willReadFrequently: true });
    return Uint32Array.from(styles, (s) => { g.fillStyle = s; g.fillRect(0, 0, 1, 1); return new Uint32Array(g.getImageData(0, 0, 1, 1).data.buffer)[0]; });
  }

  /* ---------- per frame: the pixel buffer right of the gutter ---------- */

  Timeline.prototype._ensureBuffers = function () {
    const cols = Math.ceil(this.w - GUTTER) + 2;
    if (!this.colBusy || this.colBusy.length < cols) this.colBusy = new Float64Array(cols + 64);
    const dpr = window.devicePixelRatio || 1, gx = Math.round(GUTTER * dpr);
    const bw = this.canvas.width - gx, bh = this.canvas.height;
    if (!this.img || this.img.width !== bw || this.img.height !== bh) {
      this.img = this.ctx.createImageData(Math.max(1, bw), Math.max(1, bh));
      this.px = new Uint32Array(this.img.data.buffer);
    }
    this.dpr = dpr; this.gx = gx;
  };

  Timeline.prototype._band = function (rgba, y, h) {
    // fills CSS rows [y, y + h) of the buffer (group rows' background, row borders)
    const bw = this.img.width, y0 = Math.max(0, Math.round(y * this.dpr)), y1 = Math.min(this.img.height, Math.round((y + h) * this.dpr));
    if (y1 > y0) this.px.fill(rgba, y0 * bw, y1 * bw);
  };

  Timeline.prototype._laneBegin = function (ly) {
    // spans of a lane go to its first device row (rowStart); _laneEnd copies that row down the lane
    const y0 = Math.round(ly * this.dpr);
    this.laneY0 = y0; this.laneY1 = Math.min(this.img.height, Math.round((ly + LANE_H - 2) * this.dpr));
    this.rowStart = y0 >= 0 && y0 < this.laneY1 ? y0 * this.img.width : -1;
    return this.rowStart >= 0;
  };

  Timeline.prototype._laneEnd = function () {
    for (let k = 0; k < this.wideN; k += 3) this._span(this.wide[k], this.wide[k + 1], this.wide[k + 2]);
    this.wideN = 0;
    const bw = this.img.width, px = this.px, src = this.rowStart;
    for (let y = this.laneY0 + 1; y < this.laneY1; y++) px.copyWithin(y * bw, src, src + bw);
  };

  /* ---------- per frame ---------- */

  Timeline.prototype._span = function (k, x, w) {
    // colour k over CSS x in [x, x + w) of the current lane's row
    const bw = this.img.width, d = this.dpr;
    let a = Math.round(x * d) - this.gx, b = Math.round((x + w) * d) - this.gx;
    if (a < 0) a = 0; if (b > bw) b = bw;
    if (b > a) this.px.fill(this.paletteRGBA[k], this.rowStart + a, this.rowStart + b);
    this.stats.rects++; if (k < COVERAGE.length) this.stats.coverageRects++;
  };

  Timeline.prototype._beginSlices = function () {
    this.labelN = 0;
    const st = this.stats; st.rects = 0; st.styles = 0; st.events = 0; st.levelLanes = 0; st.exactLanes = 0; st.coverageRects = 0;
    this._ensureBuffers();
    this.px.fill(this.WHITE);
  };

  Timeline.prototype._drawSlices = function (tr, y, scale) {
    const v = this.view, cols = Math.ceil(this.w - GUTTER), pxUs = 1 / scale;
    for (let d = 0; d < tr.lanes.length; d++) {
      const ly = y + 2 + d * LANE_H;
      const starts = tr.laneStarts[d], ends = tr.laneEnds[d];
      const j0 = lowerBound(ends, v.t0), j1 = lowerBound(starts, v.t1 + 1e-9);
      if (j1 <= j0 || !this._laneBegin(ly)) continue;
      let level = null;
      if (j1 - j0 > 2 * cols) for (const L of tr.levels[d]) if (L.g <= pxUs / 2) { level = L; break; }
      if (level) this._laneFromLevel(tr, d, level, ly, scale, cols);
      else this._laneExact(tr, d, j0, j1, ly, scale, cols);
      this._laneEnd();
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
      const x0 = GUTTER + (s - v.t0) * scale;
      if (w < 1) {
        const c = this._cover(x0 - GUTTER, w, w, cols); if (c < cMin) cMin = c; if (c + 1 > cMax) cMax = c + 1;
      } else this._queueWide(i, x0, x0 + w, ly);
      if (this.link[i] >= 0) this._remember(i, x0 < GUTTER ? GUTTER : x0, ly + LANE_H / 2);
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
      const x0 = GUTTER + (s - v.t0) * scale;
      if (w < 1) {
        const c = this._cover(x0 - GUTTER, w, w, cols); if (c < cMin) cMin = c; if (c + 1 > cMax) cMax = c + 1;
        continue;
      }
      this._queueWide(lane[longJ[k]], x0, x0 + w, ly);
    }
    if (cMax >= 0) this._flushColumns(cMin, cMax, ly);
  };

  Timeline.prototype._queueWide = function (i, x0, x1, ly) {
    // an event at least a pixel wide, snapped to whole pixels, with a 1 px gap after it when it is wide enough
    // to spare one; a label when it has room. Painted at the lane's end, over the lane's coverage runs.
    if (x0 < GUTTER) x0 = GUTTER; if (x1 > this.w) x1 = this.w;
    const a = Math.round(x0), b = Math.round(x1);
    const w = b - a >= 3 ? b - a - 1 : Math.max(1, b - a);
    if (this.wideN + 3 > this.wide.length) { const b = new Float64Array(this.wide.length * 2); b.set(this.wide); this.wide = b; } // grows, then reused
    this.wide[this.wideN++] = this.colorKey[i]; this.wide[this.wideN++] = a; this.wide[this.wideN++] = w;
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
        if (runShade >= 0) this._span(runShade, GUTTER + runC, c - runC);
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
    // the buffer onto the canvas, then the labels in one colour
    const ctx = this.ctx;
    ctx.putImageData(this.img, this.gx, 0);
    if (this.labelN) {
      ctx.fillStyle = "#1d1e1f"; this.stats.styles++;
      for (let k = 0; k < this.labelN; k++) ctx.fillText(this._label(this.name[this.labelIdx[k]], this.labelChars[k]), this.labelX[k], this.labelY[k]);
    }
  };
})();
