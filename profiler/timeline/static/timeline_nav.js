/* sagelaunch timeline, navigation: step navigator (any number of steps), search over event names with jump and
 * highlight, the annotation list with counts, the colour legend. Extends window.SageTimeline; load it after
 * timeline.js, timeline_lod.js and timeline_interact.js.
 */
(function () {
  "use strict";
  const Timeline = window.SageTimeline;
  const { lowerBound, fmtTime, GUTTER, LANE_H } = Timeline.util;
  const MAX_RESULTS = 40, MAX_DRAWN_MATCHES = 3000;
  const ANNOTATION_CATS = ["user_annotation", "gpu_user_annotation"];
  const SEARCH_CATS = new Set(["user_annotation", "gpu_user_annotation", "kernel", "cpu_op", "cuda_runtime", "gpu_memcpy", "gpu_memset", "python_function"]);

  const { esc } = window.SageViewUtil;  // profiler/static/view_util.js, loaded first

  Timeline.prototype._buildNav = function () {
    this.stepStarts = Float64Array.from(this.steps.map((s) => s.start));
    this.currentStep = -1; this.matches = null; this.matchPos = -1;
    this._buildStepNav();
    this._buildSearch();
    this._buildAnnotationList();
    this._buildLegend();
  };

  /* ---------- steps: prev / next, a slider and a box for a step number or name ---------- */
  Timeline.prototype._buildStepNav = function () {
    const el = this.root.querySelector(".tl-stepnav"), n = this.steps.length;
    if (!n) { el.innerHTML = '<span class="tl-muted">no step annotations</span>'; return; }
    el.innerHTML = '<button class="tl-step-prev" title="previous step ([)">◀</button>' +
      '<input class="tl-step-input" type="text" size="16" placeholder="step # or name" aria-label="go to step" list="tl-step-names">' +
      '<button class="tl-step-next" title="next step (])">▶</button>' +
      '<button class="tl-step-slowest" title="go to the slowest step">slowest</button>' +
      '<input class="tl-step-slider" type="range" min="0" max="' + (n - 1) + '" value="0" aria-label="step">' +
      '<span class="tl-step-label">' + n.toLocaleString() + " steps</span>";
    if (n <= 2000) {  // a datalist helps with a few thousand names; beyond, the number box and slider do
      const dl = document.createElement("datalist"); dl.id = "tl-step-names";
      dl.innerHTML = this.steps.map((s) => '<option value="' + esc(s.name) + '">').join("");
      el.appendChild(dl);
    }
    const input = el.querySelector(".tl-step-input"), slider = el.querySelector(".tl-step-slider");
    el.querySelector(".tl-step-prev").addEventListener("click", () => this.stepBy(-1));
    el.querySelector(".tl-step-next").addEventListener("click", () => this.stepBy(1));
    el.querySelector(".tl-step-slowest").addEventListener("click", () => this.zoomToStep(this.slowestStep()));
    slider.addEventListener("input", () => this.zoomToStep(+slider.value));
    const go = () => { const i = this.findStep(input.value); if (i >= 0) this.zoomToStep(i); input.classList.toggle("tl-bad", i < 0 && input.value !== ""); };
    input.addEventListener("change", go);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
  };

  Timeline.prototype.findStep = function (text) {
    const t = String(text).trim();
    if (!t) return -1;
    let i = this.steps.findIndex((s) => s.name === t);
    if (i < 0 && /^\d+$/.test(t)) i = this.steps.findIndex((s) => s.number === +t);
    if (i < 0) i = this.steps.findIndex((s) => s.name.toLowerCase().includes(t.toLowerCase()));
    return i;
  };

  Timeline.prototype.slowestStep = function () {
    let best = -1, most = -Infinity;
    this.steps.forEach((s, i) => { if (s.end - s.start > most) { most = s.end - s.start; best = i; } });
    return best;
  };

  Timeline.prototype.stepBy = function (d) {
    if (!this.steps.length) return;
    let i = this.currentStep;
    if (i < 0) i = Math.max(0, lowerBound(this.stepStarts, (this.view.t0 + this.view.t1) / 2) - (d > 0 ? 1 : 0));
    this.zoomToStep(Math.min(this.steps.length - 1, Math.max(0, i + d)));
  };

  Timeline.prototype._stepChanged = function (i) {
    const el = this.root.querySelector(".tl-stepnav");
    if (!el || !this.steps.length) return;
    el.querySelector(".tl-step-slider").value = i;
    el.querySelector(".tl-step-input").value = this.steps[i].name;
    const s = this.steps[i];
    el.querySelector(".tl-step-label").textContent = (i + 1).toLocaleString() + " of " + this.steps.length.toLocaleString() +
      " · " + (s.ranks ? s.ranks.map((w) => "rank " + w.rank + " " + fmtTime(w.end - w.start)).join(", ") : fmtTime(s.end - s.start));
    this.root.dataset.step = this.steps[i].name;
  };

  Timeline.prototype._drawStepBand = function (scale) {
    // the chosen step: a tinted band behind nothing (drawn over slices, translucent) and its name on the ruler
    const i = this.currentStep;
    if (i < 0) return;
    const s = this.steps[i], v = this.view;
    const x0 = Math.max(GUTTER, GUTTER + (s.start - v.t0) * scale), x1 = Math.min(this.w, GUTTER + (s.end - v.t0) * scale);
    if (x1 <= x0) return;
    const ctx = this.ctx;
    ctx.fillStyle = "rgba(179,127,235,0.10)"; ctx.fillRect(x0, 0, x1 - x0, this.h);
    ctx.fillStyle = "#b37feb"; ctx.fillRect(x0, 0, 2, this.h); ctx.fillRect(x1 - 2, 0, 2, this.h);
  };

  /* ---------- search: names of annotations, kernels, operators; jump and highlight ---------- */
  Timeline.prototype._buildSearch = function () {
    const el = this.root.querySelector(".tl-search");
    el.innerHTML = '<input class="tl-search-input" type="search" size="26" placeholder="search kernels, operators, annotations" aria-label="search events">' +
      '<button class="tl-search-prev" title="previous match">↑</button><button class="tl-search-next" title="next match (Enter)">↓</button>' +
      '<span class="tl-search-count"></span><div class="tl-results" hidden></div>';
    const input = el.querySelector(".tl-search-input"), results = el.querySelector(".tl-results");
    let timer = 0;
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => this.showResults(input.value), 120); });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); clearTimeout(timer); if (!this.matches || this.query !== input.value) this.search(input.value); else this.nextMatch(e.shiftKey ? -1 : 1); results.hidden = true; }
      if (e.key === "Escape") { clearTimeout(timer); results.hidden = true; }
    });
    input.addEventListener("focus", () => { if (input.value) this.showResults(input.value); });
    el.querySelector(".tl-search-next").addEventListener("click", () => this.nextMatch(1));
    el.querySelector(".tl-search-prev").addEventListener("click", () => this.nextMatch(-1));
    results.addEventListener("mousedown", (e) => {
      const li = e.target.closest("[data-name]");
      if (!li) return;
      e.preventDefault();
      input.value = this.names[+li.dataset.name];
      this.search(input.value, +li.dataset.name); results.hidden = true;
    });
    document.addEventListener("mousedown", (e) => { if (!el.contains(e.target)) results.hidden = true; });
  };

  Timeline.prototype._nameCounts = function () {
    if (!this.nameCount) {
      this.nameCount = new Int32Array(this.names.length);
      for (let i = 0; i < this.n; i++) this.nameCount[this.name[i]]++;
    }
    return this.nameCount;
  };

  Timeline.prototype._matchingNames = function (q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    const counts = this._nameCounts(), out = [];
    for (let k = 0; k < this.names.length; k++) if (counts[k] && this.names[k].toLowerCase().includes(q)) out.push(k);
    return out.sort((a, b) => counts[b] - counts[a]);
  };

  Timeline.prototype.showResults = function (q) {
    const results = this.root.querySelector(".tl-results"), ids = this._matchingNames(q), counts = this._nameCounts();
    if (!q.trim()) { results.hidden = true; return; }
    const catOf = new Map();
    if (ids.length) { const want = new Set(ids.slice(0, MAX_RESULTS)); for (let i = 0; i < this.n && catOf.size < want.size; i++) if (want.has(this.name[i]) && !catOf.has(this.name[i])) catOf.set(this.name[i], this.cats[this.cat[i]]); }
    results.innerHTML = (ids.length ? "" : '<div class="tl-muted">no event name contains “' + esc(q) + "”</div>") +
      ids.slice(0, MAX_RESULTS).map((k) => '<div class="tl-result" data-name="' + k + '" title="' + esc(this.names[k]) + '"><span class="tl-r-name">' + esc(this.names[k]) +
        '</span><span class="tl-r-meta">' + esc(catOf.get(k) || "") + " · " + counts[k].toLocaleString() + "×</span></div>").join("") +
      (ids.length > MAX_RESULTS ? '<div class="tl-muted">' + (ids.length - MAX_RESULTS) + " more names; Enter searches them all</div>" : "");
    results.hidden = false;
  };

  Timeline.prototype.search = function (q, nameId) {
    // every event whose name contains q (or is exactly names[nameId]); the first at or after the view's start
    this.query = q;
    const ids = nameId != null ? [nameId] : this._matchingNames(q);
    const want = new Uint8Array(this.names.length);
    ids.forEach((k) => { want[k] = 1; });
    const m = [];
    for (let i = 0; i < this.n; i++) if (want[this.name[i]] && SEARCH_CATS.has(this.cats[this.cat[i]])) m.push(i);
    m.sort((a, b) => this.start[a] - this.start[b]);
    this.matches = Int32Array.from(m);
    this.matchStarts = Float64Array.from(m.map((i) => this.start[i]));
    this.matchPos = -1;
    const count = this.root.querySelector(".tl-search-count");
    if (!m.length) { count.textContent = "no match"; this.requestDraw(); return 0; }
    this.matchPos = Math.min(m.length - 1, lowerBound(this.matchStarts, this.view.t0)) - 1;
    this.nextMatch(1);
    return m.length;
  };

  Timeline.prototype.nextMatch = function (d) {
    if (!this.matches || !this.matches.length) return;
    const n = this.matches.length;
    this.matchPos = ((this.matchPos + d) % n + n) % n;
    const i = this.matches[this.matchPos];
    this.root.querySelector(".tl-search-count").textContent = (this.matchPos + 1).toLocaleString() + " of " + n.toLocaleString();
    const span = this.view.t1 - this.view.t0;
    if (this.dur[i] > span * 0.9 || this.start[i] < this.view.t0 || this.start[i] + this.dur[i] > this.view.t1) {
      const w = Math.max(this.dur[i] * 1.5, Math.min(span, this.dur[i] * 20 + 1));
      this.zoomTo(this.start[i] + this.dur[i] / 2 - w / 2, this.start[i] + this.dur[i] / 2 + w / 2);
    }
    this.jumpTo(i);
    this.showTab("sel");
  };

  Timeline.prototype._drawMatches = function (scale) {
    // outline every match in view (at most MAX_DRAWN_MATCHES), the current one is the selection's outline
    if (!this.matches || !this.matches.length) return;
    const ctx = this.ctx, v = this.view;
    let j = Math.max(0, lowerBound(this.matchStarts, v.t0 - (v.t1 - v.t0)));
    ctx.strokeStyle = "#ff9800"; ctx.lineWidth = 2; ctx.beginPath();
    let drawn = 0;
    for (; j < this.matches.length && this.matchStarts[j] <= v.t1 && drawn < MAX_DRAWN_MATCHES; j++) {
      const i = this.matches[j];
      if (this.start[i] + this.dur[i] < v.t0) continue;
      const p = this._eventPos(i);
      if (!p || p[1] < 0 || p[1] > this.h) continue;
      const x0 = Math.max(GUTTER, GUTTER + (this.start[i] - v.t0) * scale), x1 = Math.min(this.w, GUTTER + (this.start[i] + this.dur[i] - v.t0) * scale);
      ctx.rect(x0 - 1, p[1] - LANE_H / 2 - 1, Math.max(3, x1 - x0 + 2), LANE_H); drawn++;
    }
    ctx.stroke(); ctx.lineWidth = 1;
    this.matchesDrawn = drawn;
  };

  /* ---------- annotation list ---------- */
  Timeline.prototype._buildAnnotationList = function () {
    const el = this.root.querySelector(".tl-ann"), counts = new Map(), annCats = new Set(ANNOTATION_CATS.map((c) => this.cats.indexOf(c)).filter((k) => k >= 0));
    for (let i = 0; i < this.n; i++) if (annCats.has(this.cat[i])) counts.set(this.name[i], (counts.get(this.name[i]) || 0) + 1);
    const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    const steps = rows.filter(([k]) => /^(ProfilerStep#|step_)\d+$/.test(this.names[k]));
    const other = rows.filter(([k]) => !/^(ProfilerStep#|step_)\d+$/.test(this.names[k]));
    let html = '<input class="tl-ann-filter" type="search" placeholder="filter annotations" aria-label="filter annotations"><ul class="tl-ann-list">';
    if (!rows.length) html += '<li class="tl-muted">no annotations in this profile</li>';
    for (const [k, c] of other) html += '<li data-name="' + k + '"><a href="#" title="' + esc(this.names[k]) + '">' + esc(this.names[k]) + '</a><span class="tl-count">' + c.toLocaleString() + "</span></li>";
    if (steps.length) html += '<li class="tl-muted">' + steps.length.toLocaleString() + " step annotations (use the step navigator)</li>";
    el.innerHTML = html + "</ul>";
    this.annotationCounts = other.map(([k, c]) => ({ name: this.names[k], count: c }));
    el.querySelector(".tl-ann-filter").addEventListener("input", (e) => {
      const q = e.target.value.toLowerCase();
      el.querySelectorAll("li[data-name]").forEach((li) => { li.hidden = q && !this.names[+li.dataset.name].toLowerCase().includes(q); });
    });
    el.addEventListener("click", (e) => {
      const li = e.target.closest("li[data-name]");
      if (!li) return;
      e.preventDefault();
      this.root.querySelector(".tl-search-input").value = this.names[+li.dataset.name];
      this.search(this.names[+li.dataset.name], +li.dataset.name);
    });
  };

  /* ---------- colour legend ---------- */
  Timeline.prototype._buildLegend = function () {
    const el = this.root.querySelector(".tl-legend"), colors = Timeline.util.CAT_COLORS || {};
    const present = new Set(Array.from(new Set(this.cat)).map((c) => this.cats[c]));
    const label = { kernel: "GPU kernel (one colour per kernel name)", cuda_runtime: "CUDA/HIP runtime call (kernel launch)", cpu_op: "CPU operator",
      user_annotation: "annotation (CPU side)", gpu_user_annotation: "annotation (GPU side)", gpu_memcpy: "memory copy", gpu_memset: "memory set",
      sync: "synchronisation", cuda_sync: "synchronisation", step: "step" };
    let html = '<ul class="tl-legend-list">';
    for (const c of this.cats) {
      if (!present.has(c)) continue;
      const sw = c === "kernel" ? '<span class="tl-sw tl-sw-rainbow"></span>' : '<span class="tl-sw" style="background:' + esc(colors[c] || "#8a9bb5") + '"></span>';
      html += "<li>" + sw + esc(label[c] || c) + "</li>";
    }
    html += '<li><span class="tl-sw" style="background:linear-gradient(90deg,#d6dce5,#8a9bb5)"></span>many events per pixel (darker: busier)</li>' +
      '<li><span class="tl-sw" style="background:#00b8d9;height:3px"></span>launch → kernel (selected event)</li>' +
      '<li><span class="tl-sw" style="border:2px solid #ff9800;background:none"></span>search match</li>' +
      '<li><span class="tl-sw" style="background:rgba(179,127,235,0.35)"></span>chosen step</li></ul>';
    el.innerHTML = html;
  };
})();
