/* sagelaunch dashboard: turns the data of profiler/report/data.py into Plotly charts.
 * Used by the offline report (everything inlined) and by the profile browser (served files).
 * Findings and key figures come first, as the analysis computed them (the CLI prints the same strings).
 * A section without data shows why (its "missing" text); a CPU-only profile gets one banner instead.
 */
(function () {
  "use strict";
  const CHARTS = [
    ["gpu-active", "GPU time: active vs idle (within the GPU span)", "gpu_active", true],
    ["gpu-util", "GPU utilisation over time (per node; mean of its GPUs)", "gpu_util", true],
    ["cpu-active", "CPU active time", "cpu_active", false],
    ["cpu-util", "CPU utilisation over time", "cpu_util", false],
    ["kernel-time-all", "Time of all GPU kernels (top k + other)", "kernels", true],
    ["kernel-time-top", "Time of the top k GPU kernels", "kernels", true],
    ["kernel-count-all", "Launch counts of all kernels (top k + other)", "kernels", true],
    ["kernel-count-top", "Launch counts of the top k kernels", "kernels", true],
    ["step-time", "Step time histogram", "step_time", false],
    ["precision", "Kernel precision (GPU time; NCCL/RCCL kernels as communication)", "precision", true],
    ["gpu-activity", "GPU activity (kernel / memcpy / memset / sync)", "gpu_activity", true],
    ["memory-ops", "GPU memory operations", "memory_ops", true],
  ];
  const CONFIG = { displaylogo: false, responsive: true };
  const BASE = { margin: { l: 50, r: 20, t: 10, b: 40 }, height: 300, font: { size: 11 } };
  const MAX_ANN = 6;

  const { esc } = window.SageViewUtil;  // profiler/static/view_util.js, loaded first
  function clip(s, n) { return s.length > n ? s.slice(0, n - 13) + "…" + s.slice(s.length - 12) : s; }  // "#k " keeps clipped bar labels distinct
  function fmtUs(us) { return us >= 1e6 ? (us / 1e6).toFixed(2) + " s" : us >= 1e3 ? (us / 1e3).toFixed(2) + " ms" : us.toFixed(1) + " µs"; }

  function Dashboard(root, data, Plotly) {
    this.root = root; this.data = data; this.Plotly = Plotly || window.Plotly;
    this.k = 15; this.rendered = {}; this.perGpu = false;
    const a = data.sections.annotations;
    this.annotations = a.missing ? [] : (a.defaults || [a.default]).slice(0, MAX_ANN);
    this._dom();
    this.renderAll();
  }

  Dashboard.prototype._findingsHtml = function () {
    const f = this.data.findings || [];
    let html = '<section class="db-card db-wide" id="db-findings"><h3>Findings: what to change (' + f.length + ")</h3>";
    if (!f.length) html += '<div class="db-none">No finding: none of the rules fired on this profile.</div>';
    for (const x of f) {
      const ev = Object.entries(x.evidence).map(([k, v]) => esc(k) + " = " + esc(typeof v === "object" ? JSON.stringify(v) : v)).join(" · ");
      html += '<div class="db-finding sev-' + esc(x.severity) + '" data-rule="' + esc(x.rule) + '"><div class="db-f-head"><span class="db-sev">' + esc(x.severity) +
        "</span> <b>" + esc(x.rule) + "</b>" + (x.rank != null ? " · rank " + esc(x.rank) : "") + "</div>" +
        '<div class="db-f-summary">' + esc(x.summary) + '</div><div class="db-f-fix"><b>Change:</b> ' + esc(x.fix) + "</div>" +
        '<div class="db-f-evidence">' + ev + "</div></div>";
    }
    return html + "</section>";
  };

  Dashboard.prototype._figuresHtml = function () {
    // one table per rank / host; with many ranks only the first opens, the rest fold
    const figs = this.data.figures || [];
    if (!figs.length) return "";
    const groups = [];
    for (const f of figs) {
      const s = f.rank != null ? "rank " + f.rank : "host " + f.host;
      if (!groups.length || groups[groups.length - 1].scope !== s) groups.push({ scope: s, rows: [] });
      groups[groups.length - 1].rows.push(f);
    }
    let html = '<section class="db-card db-wide" id="db-figures"><h3>Key figures</h3>';
    groups.forEach((g, i) => {
      html += "<details" + (i === 0 || groups.length <= 3 ? " open" : "") + '><summary class="db-scope">' + esc(g.scope) + '</summary><table class="db-figs">' +
        g.rows.map((f) => '<tr data-key="' + esc(f.key) + '"><td>' + esc(f.label) + '</td><td class="db-fig">' + esc(f.text) + "</td></tr>").join("") + "</table></details>";
    });
    return html + "</section>";
  };

  Dashboard.prototype._ranksHtml = function () {
    // the ranks side by side, the largest value of each column marked (the straggler's phase, the waiters' Backward)
    const c = this.data.ranks_compared;
    if (!c) return "";
    let html = '<section class="db-card db-wide" id="db-ranks"><h3>Ranks side by side (per step)</h3><table class="db-figs db-ranks"><tr><th>rank</th>' +
      c.columns.map((col) => "<th>" + esc(col.label + " (" + col.unit + ")") + "</th>").join("") + "</tr>";
    for (const row of c.rows) {
      html += '<tr data-rank="' + esc(row.rank) + '"><td>' + esc(row.rank) + "</td>" + c.columns.map((col) => {
        const top = c.largest[col.key] === row.rank;
        return '<td class="db-fig' + (top ? ' db-largest" title="the largest of the ranks' : "") + '" data-key="' + esc(col.key) + '">' + (row[col.key] == null ? "" : esc(row[col.key].toLocaleString())) + "</td>";
      }).join("") + "</tr>";
    }
    return html + "</table></section>";
  };

  Dashboard.prototype._dom = function () {
    const s = this.data.sections, banner = this.data.banner;
    let html = '<div class="db-controls"><label>k (kernels shown): <input id="db-k" type="number" min="1" max="500" value="15"></label></div>';
    if (banner) html += '<div class="db-banner" id="db-banner">' + esc(banner) + "</div>";
    if (this.data.warnings && this.data.warnings.length) html += '<div class="db-warnings">' + this.data.warnings.map(esc).join("<br>") + "</div>";
    html += '<div class="db-grid">' + this._findingsHtml() + this._ranksHtml() + this._figuresHtml();
    for (const [id, title, key, gpuOnly] of CHARTS) {
      const sec = s[key];
      if (banner && gpuOnly && sec.missing) continue; // the banner says it once
      html += '<section class="db-card" data-chart="' + id + '"><h3>' + esc(title) + "</h3>";
      if (id === "gpu-util" && sec.per_gpu && sec.per_gpu.length > 1) html += '<label class="db-opt"><input type="checkbox" id="db-per-gpu"> per-GPU lines</label>';
      if (sec.missing) html += '<div class="db-missing" id="chart-' + id + '">' + esc(sec.missing) + "</div>";
      else html += '<div class="db-chart" id="chart-' + id + '"></div>';
      if (key === "kernels" && !sec.missing) html += '<div class="db-fullname" id="fullname-' + id + '">Hover a kernel for its full name.</div>';
      if (sec.source) html += '<div class="db-source">' + esc(sec.source) + "</div>";
      html += "</section>";
    }
    const a = s.annotations;
    html += '<section class="db-card db-wide" data-chart="annotation"><h3>Annotation duration histograms</h3>';
    if (a.missing) html += '<div class="db-missing" id="chart-annotation">' + esc(a.missing) + "</div>";
    else {
      html += '<div class="db-ann-controls"><label>Add an annotation: <input id="db-ann-input" list="db-ann-names" placeholder="type a name…" size="40"></label>' +
        '<datalist id="db-ann-names">' + a.names.map((n) => '<option value="' + esc(n) + '">' + esc(n + " (" + a.counts[n] + ")") + "</option>").join("") + "</datalist></div>" +
        '<div id="chart-annotation"></div>';
    }
    html += "</section>";
    this.root.innerHTML = html + "</div>";
    const kInput = this.root.querySelector("#db-k");
    kInput.addEventListener("input", () => {
      const k = parseInt(kInput.value, 10);
      if (k >= 1) { this.k = Math.min(k, 500); this.renderKernels(); }
    });
    const pg = this.root.querySelector("#db-per-gpu");
    if (pg) pg.addEventListener("change", () => { this.perGpu = pg.checked; this.renderGpuUtil(); });
    const ai = this.root.querySelector("#db-ann-input");
    if (ai) ai.addEventListener("change", () => { if (this.addAnnotation(ai.value.trim())) ai.value = ""; });
  };

  Dashboard.prototype._plotEl = function (el, traces, layout) {
    el.dataset.rendered = "0";
    return this.Plotly.react(el, traces, Object.assign({}, BASE, layout || {}), CONFIG).then(() => { el.dataset.rendered = "1"; });
  };
  Dashboard.prototype._plot = function (id, traces, layout) {
    const el = this.root.querySelector("#chart-" + id);
    if (!el || el.classList.contains("db-missing")) return Promise.resolve();
    return this._plotEl(el, traces, layout).then(() => { this.rendered[id] = true; });
  };

  Dashboard.prototype._pie = function (id, sec, hole) {
    return this._plot(id, [{ type: "pie", labels: sec.labels, values: sec.values, hole: hole || 0.35, sort: false,
      textinfo: "percent", hovertemplate: "%{label}<br>%{value:.4s}" + (sec.unit === "%" ? "%" : " µs") + " (%{percent})<extra></extra>" }],
      { showlegend: true, legend: { font: { size: 10 } } });
  };

  Dashboard.prototype._lines = function (id, series, ytitle) {
    const traces = series.map((s) => ({ type: "scatter", mode: "lines", name: s.name, x: s.t, y: s.v }));
    return this._plot(id, traces, { xaxis: { title: { text: "time (s)" } }, yaxis: { title: { text: ytitle }, range: [0, 105] }, showlegend: true, legend: { orientation: "h", y: -0.25 }, margin: { l: 50, r: 20, t: 10, b: 70 } });
  };

  Dashboard.prototype.renderGpuUtil = function () {
    const s = this.data.sections.gpu_util;
    if (s.missing) return Promise.resolve();
    return this._lines("gpu-util", s.series.concat(this.perGpu ? s.per_gpu || [] : []), "GPU utilisation %");
  };

  Dashboard.prototype._hoverName = function (id) {
    // the full kernel name, inside the card (a Plotly tooltip would overflow it)
    const el = this.root.querySelector("#chart-" + id), box = this.root.querySelector("#fullname-" + id);
    if (!el || !box || el.dataset.hoverBound) return;
    el.dataset.hoverBound = "1";
    el.on("plotly_hover", (ev) => {
      const p = ev.points[0], c = Array.isArray(p.customdata) && Array.isArray(p.customdata[0]) ? p.customdata[0] : p.customdata;
      box.innerHTML = '<span class="db-fn">' + esc(c ? c[0] : p.label) + "</span>" + (c ? '<span class="db-fn-figs">' + esc(c[1] + " · " + c[2] + " launches") + "</span>" : "");
      box.classList.add("db-active");
    });
  };

  Dashboard.prototype.renderKernels = function () {
    const s = this.data.sections.kernels;
    if (s.missing) return Promise.resolve();
    const k = this.k, jobs = [];
    for (const [metric, allId, topId] of [["total_us", "kernel-time-all", "kernel-time-top"], ["count", "kernel-count-all", "kernel-count-top"]]) {
      const idx = s.names.map((_, i) => i).sort((a, b) => s[metric][b] - s[metric][a]);
      const top = idx.slice(0, k), rest = idx.slice(k);
      const other = rest.reduce((acc, i) => acc + s[metric][i], 0);
      // slices keyed by the full name (ids), labelled by short names that stay distinct
      const ids = top.map((i) => s.names[i]), labels = top.map((i) => s.labels[i]), values = top.map((i) => s[metric][i]);
      const custom = top.map((i) => [s.names[i], fmtUs(s.total_us[i]), s.count[i]]);
      if (rest.length) { ids.push("other"); labels.push("other (" + rest.length + " kernels)"); values.push(other); custom.push(["other: " + rest.length + " kernels", fmtUs(rest.reduce((a, i) => a + s.total_us[i], 0)), rest.reduce((a, i) => a + s.count[i], 0)]); }
      const unit = metric === "count" ? " launches" : " µs";
      jobs.push(this._plot(allId, [{ type: "pie", ids: ids, labels: labels, values: values, customdata: custom, sort: false, textinfo: "percent",
        textposition: "inside", hovertemplate: "%{label}<br>%{value:,.0f}" + unit + " (%{percent})<extra></extra>" }],
        { showlegend: true, legend: { font: { size: 9 }, x: 1.02, y: 0.5 }, height: 340, margin: { l: 10, r: 10, t: 10, b: 10 } })
        .then(() => this._hoverName(allId)));
      const tl = top.slice().reverse();
      jobs.push(this._plot(topId, [{ type: "bar", orientation: "h", y: tl.map((i) => "#" + (idx.indexOf(i) + 1) + " " + clip(s.labels[i], 44)),
        x: tl.map((i) => s[metric][i]), customdata: tl.map((i) => [s.names[i], fmtUs(s.total_us[i]), s.count[i]]),
        hovertemplate: "time %{customdata[1]}, %{customdata[2]} launches<extra></extra>", marker: { color: "#409eff" } }],
        { height: Math.max(300, 18 * top.length + 60), margin: { l: 320, r: 20, t: 10, b: 40 }, yaxis: { automargin: false, tickfont: { size: 10 } },
          xaxis: { title: { text: metric === "count" ? "launches" : "total time (µs)" } } }).then(() => this._hoverName(topId)));
    }
    return Promise.all(jobs);
  };

  function histBars(h, color, name) {
    const e = h.edges_us, mid = [], width = [], text = [];
    for (let i = 0; i + 1 < e.length; i++) { mid.push((e[i] + e[i + 1]) / 2000); width.push((e[i + 1] - e[i]) / 1000); text.push((e[i] / 1000).toPrecision(4) + "–" + (e[i + 1] / 1000).toPrecision(4) + " ms"); }
    return { type: "bar", x: mid, y: h.counts, width: width, name: name, customdata: text, marker: { color: color, line: { color: "#fff", width: 1 } },
      hovertemplate: "%{customdata}: %{y}<extra></extra>" };
  }

  Dashboard.prototype.addAnnotation = function (name) {
    const a = this.data.sections.annotations;
    if (a.missing || !a.histograms[name] || this.annotations.includes(name)) return false;
    this.annotations.push(name);
    if (this.annotations.length > MAX_ANN) this.annotations.shift();
    this.renderAnnotations();
    return true;
  };
  Dashboard.prototype.removeAnnotation = function (name) {
    this.annotations = this.annotations.filter((n) => n !== name);
    this.renderAnnotations();
  };

  Dashboard.prototype.renderAnnotations = function () {
    // the chosen annotations side by side: one Plotly figure with a subplot each (one draw, not one per name)
    const a = this.data.sections.annotations, box = this.root.querySelector("#chart-annotation");
    if (a.missing || !box) return Promise.resolve();
    const n = this.annotations.length;
    const old = box.querySelector("#chart-ann");
    if (old) this.Plotly.purge(old);
    box.innerHTML = '<div class="db-ann-titles" style="grid-template-columns: repeat(' + Math.max(n, 1) + ', 1fr)">' +
      this.annotations.map((name, i) => '<div class="db-ann" data-name="' + esc(name) + '"><span title="' + esc(name) + '">' + esc(name) +
        "</span> <small>(" + a.counts[name] + " spans)</small> <button class=\"db-ann-remove\" data-i=\"" + i + '" aria-label="remove" title="remove">×</button></div>').join("") +
      '</div><div class="db-chart" id="chart-ann"></div>';
    box.querySelectorAll(".db-ann-remove").forEach((b) => b.addEventListener("click", () => this.removeAnnotation(this.annotations[+b.dataset.i])));
    if (!n) { box.dataset.rendered = "1"; return Promise.resolve(); }
    const traces = this.annotations.map((name, i) => Object.assign(histBars(a.histograms[name], "#e6a23c", name),
      { xaxis: "x" + (i ? i + 1 : ""), yaxis: "y" + (i ? i + 1 : ""), showlegend: false }));
    const layout = { height: 230, bargap: 0, margin: { l: 40, r: 10, t: 6, b: 36 }, grid: { rows: 1, columns: n, pattern: "independent", xgap: 0.12 } };
    for (let i = 0; i < n; i++) layout["xaxis" + (i ? i + 1 : "")] = { title: { text: "duration (ms)", font: { size: 10 } } };
    layout.yaxis = { title: { text: "count" } };
    return this._plotEl(box.querySelector("#chart-ann"), traces, layout).then(() => { box.dataset.rendered = "1"; });
  };

  Dashboard.prototype.renderAll = function () {
    const s = this.data.sections, jobs = [];
    if (!s.gpu_active.missing) jobs.push(this._pie("gpu-active", s.gpu_active));
    jobs.push(this.renderGpuUtil());
    if (!s.cpu_active.missing) jobs.push(this._pie("cpu-active", s.cpu_active));
    if (!s.cpu_util.missing) jobs.push(this._lines("cpu-util", s.cpu_util.series, "CPU utilisation %"));
    jobs.push(this.renderKernels());
    if (!s.step_time.missing) jobs.push(this._plot("step-time", [histBars(s.step_time.histogram, "#b37feb", "steps")],
      { bargap: 0, xaxis: { title: { text: "step time (ms)" } }, yaxis: { title: { text: "steps" } } }));
    for (const [id, key] of [["precision", "precision"], ["gpu-activity", "gpu_activity"], ["memory-ops", "memory_ops"]]) {
      if (!s[key].missing) jobs.push(this._pie(id, s[key]));
    }
    jobs.push(this.renderAnnotations());
    this.ready = Promise.all(jobs).then(() => { this.root.dataset.ready = "1"; });
    return this.ready;
  };

  window.SageDashboard = Dashboard;
})();
