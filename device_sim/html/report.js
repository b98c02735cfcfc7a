// sensorbudget report: draw the figures, show the design a point or the list selects.
(function () {
  "use strict";
  var figures = JSON.parse(document.getElementById("sb-figures").textContent);
  var select = document.getElementById("design-select");
  function show(i) {
    var key = (i === null || i === undefined) ? "" : String(i);
    document.querySelectorAll(".design").forEach(function (el) {
      el.hidden = el.getAttribute("data-design") !== key;
    });
    var none = document.getElementById("design-none");
    if (none) { none.hidden = key !== ""; }
    if (select) { select.value = key; }
  }
  if (select) {
    select.addEventListener("change", function () { show(select.value); });
  }
  var config = {displaylogo: false, responsive: true};
  var drawn = figures.map(function (f) {
    return Plotly.newPlot(f.id, f.data, f.layout, config).then(function (gd) {
      if (f.pareto) {
        gd.on("plotly_click", function (ev) {
          var p = ev && ev.points && ev.points[0];
          if (p && p.customdata !== undefined && p.customdata !== null) { show(p.customdata); }
        });
      }
      return gd;
    });
  });
  window.sensorbudgetReport = {show: show, figures: figures};
  Promise.all(drawn).then(function () { document.body.setAttribute("data-ready", "1"); });
})();
