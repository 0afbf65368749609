/* sagelaunch timeline, interaction: hit testing, selection panel with connected events, mouse and keys.
 * Extends window.SageTimeline (timeline.js); load this file after it.
 */
(function () {
  "use strict";
  const Timeline = window.SageTimeline;
  const { lowerBound, fmtTime, GUTTER, LANE_H } = Timeline.util;

  Timeline.prototype.hitTest = function (x, y) {
    if (x < GUTTER) return { gutter: true, row: this._rowAt(y) };
    const row = this._rowAt(y);
    if (!row || row.node.track == null) return { row: row };
    const tr = this.tracks[row.node.track];
    if (tr.kind === "counter") return { row: row };
    const d = Math.floor((y + this.scrollY - row.y - 2) / LANE_H);
    if (d < 0 || d >= tr.lanes.length) return { row: row };
    const lane = tr.lanes[d], ends = tr.laneEnds[d];
    const t = this.tOf(x), tol = 3 / ((this.w - GUTTER) / (this.view.t1 - this.view.t0));
    let j = lowerBound(ends, t - tol);
    let best = -1, bestDist = Infinity;
    for (; j < lane.length && this.start[lane[j]] <= t + tol; j++) {
      const i = lane[j], s = this.start[i], e = s + this.dur[i];
      const dist = t < s ? s - t : t > e ? t - e : 0;
      if (dist < bestDist) { bestDist = dist; best = i; }
    }
    return { row: row, event: best };
  };

  Timeline.prototype._rowAt = function (y) {
    const yy = y + this.scrollY;
    return (this.rowsCache || []).find((r) => yy >= r.y && yy < r.y + r.h) || null;
  };

  Timeline.prototype.trackLabel = function (tr) {
    return this.tracks[tr].path || this.tracks[tr].label;
  };

  Timeline.prototype.select = function (i) {
    this.selected = i;
    this.renderPanel();
    this.requestDraw();
    this.root.dispatchEvent(new CustomEvent("tl-select", { detail: { index: i } }));
  };

  Timeline.prototype.eventInfo = function (i) {
    if (i < 0) return null;
    const cat = this.cats[this.cat[i]];
    const info = {
      index: i, name: this.names[this.name[i]], category: cat, track: this.trackLabel(this.track[i]),
      start: fmtTime(this.start[i]), duration: fmtTime(this.dur[i]), end: fmtTime(this.start[i] + this.dur[i]),
    };
    if (this.corr[i] >= 0) info.correlation = this.corr[i];
    for (const [k, col] of Object.entries(this.fields)) if (col[i] >= 0) info[k] = col[i];
    return info;
  };

  Timeline.prototype.connected = function (i) {
    // the launch/kernel partner, the enclosing step and the enclosing host events (parents in the lanes)
    const out = [];
    if (this.link[i] >= 0) {
      const k = this.link[i];
      out.push({ rel: this.cats[this.cat[i]] === "cuda_runtime" ? "launches" : "launched by", index: k });
    }
    const tr = this.tracks[this.track[i]], s = this.start[i], e = s + this.dur[i];
    for (let d = this.laneOf[i] - 1; d >= 0; d--) {
      const lane = tr.lanes[d], ends = tr.laneEnds[d];
      const j = lowerBound(ends, e);
      if (j < lane.length && this.start[lane[j]] <= s) out.push({ rel: "inside", index: lane[j] });
    }
    const k = Timeline.util.lowerBound(this.stepStarts || [], s + 1e-9) - 1; // steps sorted by start
    if (k >= 0 && s < this.steps[k].end) out.push({ rel: "in step", step: this.steps[k].name });
    return out;
  };

  Timeline.prototype.renderPanel = function () {
    const i = this.selected, el = this.panel;
    if (i < 0) { el.textContent = "Click an event."; return; }
    const info = this.eventInfo(i);
    const { esc } = window.SageViewUtil;  // profiler/static/view_util.js, loaded first
    let html = '<table class="tl-fields">';
    for (const [k, v] of Object.entries(info)) html += "<tr><th>" + esc(k) + '</th><td class="tl-f-' + esc(k) + '">' + esc(v) + "</td></tr>";
    html += '</table><h4>Connected events</h4><ul class="tl-connected">';
    const conn = this.connected(i);
    if (!conn.length) html += "<li>none</li>";
    for (const c of conn) {
      if (c.step) html += '<li class="tl-conn-step">' + esc(c.rel) + " " + esc(c.step) + "</li>";
      else html += '<li><a href="#" class="tl-conn" data-rel="' + esc(c.rel) + '" data-index="' + c.index + '">' + esc(c.rel) + ": " +
        esc(this.names[this.name[c.index]].slice(0, 80)) + " (" + esc(this.cats[this.cat[c.index]]) + ", " + esc(this.trackLabel(this.track[c.index])) + ")</a></li>";
    }
    el.innerHTML = html + "</ul>";
    el.querySelectorAll("a.tl-conn").forEach((a) => a.addEventListener("click", (evt) => {
      evt.preventDefault();
      const k = +a.dataset.index; this.revealEvent(k); this.select(k);
    }));
  };

  Timeline.prototype.jumpTo = function (i) {
    // show event i (time and row: open its folded parents, scroll to it) and select it
    this.revealEvent(i);
    if (!this.rowOfTrack || !this.rowOfTrack.get(this.track[i])) { this._openTrack(this.track[i]); this._rows(); }
    const row = this.rowOfTrack.get(this.track[i]);
    if (row && (row.y - this.scrollY < 22 || row.y - this.scrollY > this.h - 30)) {
      this.scrollY = Math.max(0, Math.min(Math.max(0, this.contentH - this.h), row.y - this.h / 3));
    }
    this.select(i);
  };

  Timeline.prototype._openTrack = function (track) {
    const visit = (node, path) => {
      if (node.track === track) { path.forEach((p) => { p.open = true; }); return true; }
      return (node.children || []).some((c) => visit(c, path.concat([node])));
    };
    this.tree.some((n) => visit(n, []));
    this.rowsDirty = true;
  };

  Timeline.prototype.revealEvent = function (i) {
    const s = this.start[i], e = s + this.dur[i];
    if (s < this.view.t0 || e > this.view.t1) {
      const span = Math.max(this.view.t1 - this.view.t0, (e - s) * 1.2);
      this.zoomTo((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
    }
  };

  Timeline.prototype._bind = function () {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("mousedown", (e) => {
      drag = { x: e.offsetX, y: e.offsetY, t0: this.view.t0, t1: this.view.t1, sy: this.scrollY, moved: false, measure: e.shiftKey && e.offsetX >= GUTTER };
      if (drag.measure) { const t = this.snapTime(e.offsetX, e.offsetY); this.measure(t, t); }
      c.focus();
    });
    window.addEventListener("mouseup", (e) => {
      if (drag && !drag.moved && !drag.measure && e.target === c) this._click(drag.x, drag.y);
      drag = null;
    });
    c.addEventListener("mousemove", (e) => {
      if (!drag) return;
      if (drag.measure) { this.measure(this.measured.t0, this.snapTime(e.offsetX, e.offsetY)); return; }
      const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (!drag.moved) return;
      const dt = dx / (this.w - GUTTER) * (drag.t1 - drag.t0);
      this.view = { t0: drag.t0 - dt, t1: drag.t1 - dt };
      this.scrollY = Math.max(0, Math.min(Math.max(0, this.contentH - this.h), drag.sy - dy));
      this.requestDraw();
    });
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      if (e.shiftKey) { this.scrollY = Math.max(0, Math.min(Math.max(0, this.contentH - this.h), this.scrollY + e.deltaY)); this.requestDraw(); return; }
      this.zoomBy(Math.pow(1.0015, e.deltaY), e.offsetX);
    }, { passive: false });
    c.addEventListener("keydown", (e) => {
      const k = e.key.toLowerCase();
      if (k === "w" || k === "+" || k === "=") this.zoomBy(0.8);
      else if (k === "s" || k === "-") this.zoomBy(1.25);
      else if (k === "a" || k === "arrowleft") this.panBy(-0.1);
      else if (k === "d" || k === "arrowright") this.panBy(0.1);
      else if (k === "arrowdown") { this.scrollY = Math.min(Math.max(0, this.contentH - this.h), this.scrollY + 40); this.requestDraw(); }
      else if (k === "arrowup") { this.scrollY = Math.max(0, this.scrollY - 40); this.requestDraw(); }
      else if (k === "0") this.zoomTo(0, this.span);
      else if (k === "[" && this.stepBy) this.stepBy(-1);
      else if (k === "]" && this.stepBy) this.stepBy(1);
      else if (k === "escape") { this.select(-1); this.measure(null); }
      else return;
      e.preventDefault();
    });
    if (window.ResizeObserver) new ResizeObserver(() => this.resize()).observe(c);
  };

  Timeline.prototype._click = function (x, y) {
    const m = this.edgeMarker;
    if (m && x >= m.x0 && x <= m.x1 && y >= m.y0 && y <= m.y1) { this.jumpTo(m.index); return; }
    const hit = this.hitTest(x, y);
    if (hit.gutter) {
      if (hit.row && hit.row.node.children && hit.row.node.children.length) { hit.row.node.open = !hit.row.node.open; this.invalidateRows(); }
      return;
    }
    this.select(hit.event != null ? hit.event : -1);
  };

  /* ---------- measure: shift + drag from one point to another; edges of the events under the pointer snap ---------- */
  Timeline.prototype.snapTime = function (x, y) {
    // the time under x, or the nearer edge of the event under the pointer when it lies within 6 px of it
    const t = this.tOf(x), hit = this.hitTest(x, y), i = hit.event;
    if (i == null || i < 0) return t;
    const s = this.start[i], e = s + this.dur[i], px = (this.view.t1 - this.view.t0) / (this.w - GUTTER);
    const edge = Math.abs(t - s) <= Math.abs(t - e) ? s : e;
    return Math.abs(t - edge) <= 6 * px ? edge : t;
  };

  Timeline.prototype.measure = function (t0, t1) {
    // the measured span (µs from the trace's start), shown as a band and read out in the bar; null clears it
    this.measured = t0 == null ? null : { t0: Math.min(t0, t1), t1: Math.max(t0, t1) };
    const el = this.root.querySelector(".tl-measure");
    if (el) {
      const m = this.measured;
      el.textContent = m ? "Δ " + fmtTime(m.t1 - m.t0) + " (" + fmtTime(m.t0) + " → " + fmtTime(m.t1) + ")" : "shift+drag to measure";
      el.classList.toggle("tl-muted", !m);
    }
    this.requestDraw();
    return this.measured;
  };

  Timeline.prototype._drawMeasure = function (scale) {
    const m = this.measured;
    if (!m) return;
    const v = this.view, ctx = this.ctx;
    const x0 = GUTTER + (m.t0 - v.t0) * scale, x1 = GUTTER + (m.t1 - v.t0) * scale;
    if (x1 < GUTTER || x0 > this.w) return;
    const a = Math.max(GUTTER, x0), b = Math.min(this.w, x1);
    ctx.fillStyle = "rgba(255,170,0,0.18)"; ctx.fillRect(a, 0, Math.max(1, b - a), this.h);
    ctx.strokeStyle = "#e6a23c"; ctx.beginPath();
    if (x0 >= GUTTER) { ctx.moveTo(x0 + 0.5, 0); ctx.lineTo(x0 + 0.5, this.h); }
    if (x1 <= this.w) { ctx.moveTo(x1 + 0.5, 0); ctx.lineTo(x1 + 0.5, this.h); }
    ctx.stroke();
  };

  /* helpers for tests and benchmarks: find events by name / category */
  Timeline.prototype.find = function (pred, limit) {
    const out = [];
    for (let i = 0; i < this.n && out.length < (limit || 1); i++) if (pred(this.names[this.name[i]], this.cats[this.cat[i]], i)) out.push(i);
    return out;
  };
  Timeline.prototype.screenPos = function (i) { this.draw(); return this._eventPos(i); };

})();
