/* sagelaunch views' shared page code: the report, the timeline and the profile browser load it before their own
 * scripts (inlined by profiler/view_scripts.py, served as /static/view_util.js by the browser's server).
 */
(function () {
  "use strict";
  const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

  // text → HTML-safe text for innerHTML and quoted attribute values; null and undefined show as nothing
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ENTITIES[c]); }

  window.SageViewUtil = Object.freeze({ esc });
})();
