/* sagelaunch dashboard: turns the data of profiler/report/data.py into Plotly charts.
 * Used by the offline report (everything inlined) and by the profile browser (served files).
 * A section without data shows why (its "missing" text) instead of an empty chart.
 */
(function () {
  "use strict";
  const CHARTS = [
    ["gpu-active", "GPU active time", "gpu_active"],
    ["gpu-util", "GPU utilisation over time (all nodes)", "gpu_util"],
    ["cpu-active", "CPU active time", "cpu_active"],
    ["cpu-util", "CPU utilisation over time", "cpu_util"],
    ["kernel-time-all", "Time of all GPU kernels (top k + other)", "kernels"],
    ["kernel-time-top", "Time of the top k GPU kernels", "kernels"],
    ["kernel-count-all", "Launch counts of all kernels (top k + other)", "kernels"],
    ["kernel-count-top", "Launch counts of the top k kernels", "kernels"],
    ["step-time", "Step time histogram", "step_time"],
    ["precision", "Kernel precision (GPU time)", "precision"],
    ["gpu-activity", "GPU activity (kernel / memcpy / memset / sync)", "gpu_activity"],
    ["memory-ops", "GPU memory operations", "memory_ops"],
    ["annotation", "Annotation duration histogram", "annotations"],
  ];
  const CONFIG = { displaylogo: false, responsive: true };
  const BASE = { margin: { l: 50, r: 20, t: 10, b: 40 }, height: 300, font: { size: 11 } };

  function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
  function short(s, n) { n = n || 60; return s.length > n ? s.slice(0, n - 1) + "…" : s; }
  function fmtUs(us) { return us >= 1e6 ? (us / 1e6).toFixed(2) + " s" : us >= 1e3 ? (us / 1e3).toFixed(2) + " ms" : us.toFixed(1) + " µs"; }

  function Dashboard(root, data, Plotly) {
    this.root = root; this.data = data; this.Plotly = Plotly || window.Plotly;
    this.k = 15; this.rendered = {};
    this._dom();
    this.renderAll();
  }

  Dashboard.prototype._dom = function () {
    const s = this.data.sections;
    let html = '<div class="db-controls"><label>k (kernels shown): <input id="db-k" type="number" min="1" max="500" value="15"></label>';
    if (!s.annotations.missing) {
      html += ' <label>Annotation: <select id="db-annotation">' +
        s.annotations.names.map((n) => '<option value="' + esc(n) + '"' + (n === s.annotations.default ? " selected" : "") + ">" + esc(short(n, 80)) + "</option>").join("") +
        "</select></label>";
    }
    html += "</div>";
    if (this.data.warnings && this.data.warnings.length) html += '<div class="db-warnings">' + this.data.warnings.map(esc).join("<br>") + "</div>";
    html += '<div class="db-grid">';
    for (const [id, title, key] of CHARTS) {
      const sec = s[key];
      html += '<section class="db-card" data-chart="' + id + '"><h3>' + esc(title) + "</h3>";
      if (sec.missing) html += '<div class="db-missing" id="chart-' + id + '">' + esc(sec.missing) + "</div>";
      else html += '<div class="db-chart" id="chart-' + id + '"></div>';
      if (sec.source) html += '<div class="db-source">' + esc(sec.source) + "</div>";
      html += "</section>";
    }
    this.root.innerHTML = html + "</div>";
    const kInput = this.root.querySelector("#db-k");
    kInput.addEventListener("input", () => {
      const k = parseInt(kInput.value, 10);
      if (k >= 1) { this.k = Math.min(k, 500); this.renderKernels(); }
    });
    const sel = this.root.querySelector("#db-annotation");
    if (sel) sel.addEventListener("change", () => this.renderAnnotation(sel.value));
  };

  Dashboard.prototype._plot = function (id, traces, layout) {
    const el = this.root.querySelector("#chart-" + id);
    if (!el || el.classList.contains("db-missing")) return Promise.resolve();
    el.dataset.rendered = "0";
    return this.Plotly.react(el, traces, Object.assign({}, BASE, layout || {}), CONFIG).then(() => {
      el.dataset.rendered = "1"; this.rendered[id] = true;
    });
  };

  Dashboard.prototype._pie = function (id, sec, hole) {
    return this._plot(id, [{ type: "pie", labels: sec.labels, values: sec.values, hole: hole || 0.35, sort: false,
      textinfo: "percent", hovertemplate: "%{label}<br>%{value:.4s}" + (sec.unit === "%" ? "%" : " µs") + " (%{percent})<extra></extra>" }],
      { showlegend: true, legend: { font: { size: 10 } } });
  };

  Dashboard.prototype._lines = function (id, sec, ytitle) {
    const traces = sec.series.map((s) => ({ type: "scatter", mode: "lines", name: s.name, x: s.t, y: s.v }));
    return this._plot(id, traces, { xaxis: { title: { text: "time (s)" } }, yaxis: { title: { text: ytitle }, range: [0, 105] }, showlegend: true, legend: { orientation: "h", y: -0.25 }, margin: { l: 50, r: 20, t: 10, b: 70 } });
  };

  Dashboard.prototype.renderKernels = function () {
    const s = this.data.sections.kernels;
    if (s.missing) return Promise.resolve();
    const k = this.k, jobs = [];
    for (const [metric, allId, topId, label] of [["total_us", "kernel-time-all", "kernel-time-top", "time"], ["count", "kernel-count-all", "kernel-count-top", "launches"]]) {
      const idx = s.names.map((_, i) => i).sort((a, b) => s[metric][b] - s[metric][a]);
      const top = idx.slice(0, k), rest = idx.slice(k);
      const other = rest.reduce((acc, i) => acc + s[metric][i], 0);
      const labels = top.map((i) => short(s.names[i], 50)), values = top.map((i) => s[metric][i]), full = top.map((i) => s.names[i]);
      if (rest.length) { labels.push("other (" + rest.length + " kernels)"); values.push(other); full.push("other"); }
      jobs.push(this._plot(allId, [{ type: "pie", labels: labels, values: values, customdata: full, sort: false, textinfo: "percent",
        hovertemplate: "%{customdata}<br>%{value:,.0f}" + (metric === "count" ? " launches" : " µs") + " (%{percent})<extra></extra>" }],
        { showlegend: false, height: 320 }));
      const tl = top.slice().reverse();
      jobs.push(this._plot(topId, [{ type: "bar", orientation: "h", y: tl.map((i) => short(s.names[i], 45) + " #" + (idx.indexOf(i) + 1)),
        x: tl.map((i) => s[metric][i]), customdata: tl.map((i) => [s.names[i], fmtUs(s.total_us[i]), s.count[i]]),
        hovertemplate: "%{customdata[0]}<br>time %{customdata[1]}, %{customdata[2]} launches<extra></extra>", marker: { color: "#409eff" } }],
        { height: Math.max(300, 18 * top.length + 60), margin: { l: 300, r: 20, t: 10, b: 40 },
          xaxis: { title: { text: metric === "count" ? "launches" : "total time (µs)" } } }));
    }
    return Promise.all(jobs);
  };

  Dashboard.prototype.renderAnnotation = function (name) {
    const s = this.data.sections.annotations;
    if (s.missing) return Promise.resolve();
    this.annotation = name;
    const v = s.durations_ms[name] || [];
    return this._plot("annotation", [{ type: "histogram", x: v, name: name, marker: { color: "#e6a23c" } }],
      { xaxis: { title: { text: short(name, 60) + " duration (ms)" } }, yaxis: { title: { text: "count" } } });
  };

  Dashboard.prototype.renderAll = function () {
    const s = this.data.sections, jobs = [];
    if (!s.gpu_active.missing) jobs.push(this._pie("gpu-active", s.gpu_active));
    if (!s.gpu_util.missing) jobs.push(this._lines("gpu-util", s.gpu_util, "GPU utilisation %"));
    if (!s.cpu_active.missing) jobs.push(this._pie("cpu-active", s.cpu_active));
    if (!s.cpu_util.missing) jobs.push(this._lines("cpu-util", s.cpu_util, "CPU utilisation %"));
    jobs.push(this.renderKernels());
    if (!s.step_time.missing) jobs.push(this._plot("step-time", [{ type: "histogram", x: s.step_time.values_ms, marker: { color: "#b37feb" } }],
      { xaxis: { title: { text: "step time (ms)" } }, yaxis: { title: { text: "steps" } } }));
    for (const [id, key] of [["precision", "precision"], ["gpu-activity", "gpu_activity"], ["memory-ops", "memory_ops"]]) {
      if (!s[key].missing) jobs.push(this._pie(id, s[key]));
    }
    if (!s.annotations.missing) jobs.push(this.renderAnnotation(s.annotations.default));
    this.ready = Promise.all(jobs).then(() => { this.root.dataset.ready = "1"; });
    return this.ready;
  };

  window.SageDashboard = Dashboard;
})();
