/* The report's two tabs, Dashboard and Timeline, over the data blocks of the page (profiler/report/html.py).
 * Each view is built the first time its tab is shown, so it measures the space it gets (and a report opened on
 * the dashboard never decodes the timeline). The tab follows the URL's hash: report.html#timeline opens it. */
(function () {
  "use strict";
  const TABS = ["dashboard", "timeline"];
  const data = (id) => JSON.parse(document.getElementById(id).textContent);
  const built = {};  // not window.dashboard / window.timeline: until assigned, those name the elements of that id

  function build(tab) {
    if (tab === "dashboard" && !built.dashboard) {
      built.dashboard = window.dashboard = new SageDashboard(document.getElementById("dashboard"), data("dashboard-data"), window.Plotly);
    }
    if (tab === "timeline" && !built.timeline) {
      const el = document.getElementById("timeline");
      built.timeline = window.timeline = new SageTimeline(el, data("timeline-data"));
      el.dataset.ready = "1";
    }
  }

  function show() {
    const asked = location.hash.replace("#", "");
    const tab = TABS.includes(asked) && document.getElementById("view-" + asked) ? asked : "dashboard";
    document.body.dataset.tab = tab;
    TABS.forEach((t) => {
      const view = document.getElementById("view-" + t);
      if (view) view.hidden = t !== tab;
    });
    document.querySelectorAll(".rp-tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
    build(tab);
  }

  document.querySelectorAll(".rp-tabs button").forEach((b) => b.addEventListener("click", () => { location.hash = "#" + b.dataset.tab; }));
  window.addEventListener("hashchange", show);
  show();
})();
