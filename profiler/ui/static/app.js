/* sagelaunch profile browser: job list with search, load/unload one profile, dashboard and timeline views. */
(function () {
  "use strict";
  const $ = (s) => document.querySelector(s);
  const app = { status: null, dashboard: null, timeline: null, dashData: null, tlData: null };
  window.app = app;

  const { esc } = window.SageViewUtil;
  function notice(msg) { const n = $("#notice"); n.textContent = msg || ""; n.hidden = !msg; }

  async function api(path, opts) {
    const r = await fetch(path, opts);
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  // ---- jobs ----
  let searchTimer = 0;
  async function loadJobs(refresh) {
    const params = new URLSearchParams({ q: $("#search-name").value, status: $("#search-status").value,
      created_after: $("#search-after").value, created_before: $("#search-before").value });
    if (refresh) params.set("refresh", "1");
    try {
      const data = await api("/api/jobs?" + params);
      const sel = $("#search-status");
      if (sel.options.length === 1) data.statuses.forEach((s) => sel.add(new Option(s, s)));
      $("#sources").textContent = "local registry: " + data.sources.local + " · SageMaker: " + data.sources.sagemaker +
        " · showing " + data.jobs.length + " of " + data.total + " jobs";
      const rows = data.jobs.map((j) =>
        '<tr data-job="' + esc(j.name) + '" data-source="' + esc(j.source) + '"><td class="job-name">' + esc(j.name) + "</td><td>" + esc(j.source) +
        '</td><td class="status-' + esc(j.status) + '">' + esc(j.status) + "</td><td>" + esc(j.created.replace("T", " ").replace("+00:00", "")) +
        '</td><td title="' + esc(j.location) + '">' + (j.has_profile ? "yes" : "none") + "</td><td>" +
        (j.has_profile ? '<button class="load" data-job="' + esc(j.name) + '" data-source="' + esc(j.source) + '">Load</button>' : "") + "</td></tr>");
      $("#jobs-table tbody").innerHTML = rows.join("") || '<tr><td colspan="6" class="empty">no jobs match</td></tr>';
      $("#jobs-table").dataset.count = data.jobs.length;
      notice("");
    } catch (e) { notice(e.message); }
  }
  function scheduleSearch() { clearTimeout(searchTimer); searchTimer = setTimeout(() => loadJobs(false), 150); }

  // ---- load / unload ----
  async function load(name, source) {
    const st = app.status;
    if (st && (st.state === "loaded" || st.state === "loading")) {  // the server would refuse it (409) too
      notice("profile of '" + st.job.name + "' is " + st.state + "; unload it (trash icon) before loading '" + name + "'");
      return;
    }
    try {
      app.awaitingLoad = true;
      await api("/api/load", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: name, source: source }) });
      notice("");
      pollStatus();
    } catch (e) { app.awaitingLoad = false; notice(e.message); }
  }

  async function unload() {
    await api("/api/unload", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    if (app.dashboard && window.Plotly) document.querySelectorAll("#dashboard .js-plotly-plot").forEach((el) => Plotly.purge(el));
    $("#dashboard").innerHTML = ""; $("#timeline").innerHTML = "";
    app.dashboard = app.timeline = app.dashData = app.tlData = null;
    await pollStatus();
  }

  async function pollStatus() {
    const s = await api("/api/status");
    app.status = s;
    const prog = $("#progress");
    prog.hidden = s.state !== "loading";
    $("#progress .fill").style.width = (s.progress * 100).toFixed(1) + "%";
    $("#progress .bar").setAttribute("aria-valuenow", (s.progress * 100).toFixed(0));
    $("#progress-text").textContent = s.state === "loading" ? (s.job.name + ": " + s.message + " (" + (s.progress * 100).toFixed(0) + "%)") : "";
    $("#loaded").hidden = !(s.state === "loaded" || s.state === "loading" || s.state === "error");
    $("#loaded-name").textContent = s.job ? s.job.name : "";
    document.body.dataset.state = s.state;
    if (s.state === "error") notice("loading " + s.job.name + " failed: " + s.error);
    if (s.state === "loading") { setTimeout(pollStatus, 120); return s; }
    if (s.state === "loaded" && app.awaitingLoad) { app.awaitingLoad = false; location.hash = "#/dashboard"; }
    route();
    return s;
  }

  // ---- views ----
  async function showDashboard() {
    if (!app.status || app.status.state !== "loaded") return;
    if (!app.dashData) {
      app.dashData = await api("/api/dashboard");
      app.dashboard = new SageDashboard($("#dashboard"), app.dashData, window.Plotly);
    }
  }
  async function showTimeline() {
    if (!app.status || app.status.state !== "loaded") return;
    if (!app.tlData) {
      app.tlData = await api("/api/timeline");
      app.timeline = new SageTimeline($("#timeline"), app.tlData);
    } else if (app.timeline) app.timeline.resize();
  }

  function route() {
    const view = (location.hash.replace("#/", "") || "jobs");
    for (const v of ["jobs", "dashboard", "timeline"]) {
      $("#view-" + v).hidden = v !== view;
      $("#nav-" + v).classList.toggle("active", v === view);
    }
    const loaded = app.status && app.status.state === "loaded";
    document.querySelectorAll(".view .empty").forEach((e) => { e.hidden = loaded; });
    if (view === "dashboard") showDashboard().catch((e) => notice(e.message));
    if (view === "timeline") showTimeline().catch((e) => notice(e.message));
  }

  window.addEventListener("hashchange", route);
  document.addEventListener("DOMContentLoaded", async () => {
    ["#search-name", "#search-after", "#search-before"].forEach((s) => $(s).addEventListener("input", scheduleSearch));
    $("#search-status").addEventListener("change", scheduleSearch);
    $("#search").addEventListener("submit", (e) => e.preventDefault());
    $("#refresh").addEventListener("click", () => loadJobs(true));
    $("#jobs-table").addEventListener("click", (e) => {
      const b = e.target.closest("button.load");
      if (b) load(b.dataset.job, b.dataset.source);
    });
    $("#unload").addEventListener("click", unload);
    const first = await api("/api/status");  // `sagelaunch profile ui PATH` starts with that profile loading
    if ((first.state === "loading" || first.state === "loaded") && !location.hash) app.awaitingLoad = true;
    await pollStatus();
    await loadJobs(false);
    route();
  });
})();
