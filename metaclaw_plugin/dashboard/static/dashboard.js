// Draws each chart the server wrote as JSON (<script type="application/json" data-chart="id">) with plotly.js.
"use strict";
document.querySelectorAll('script[type="application/json"][data-chart]').forEach(function (el) {
  var target = document.getElementById(el.getAttribute("data-chart"));
  if (!target || typeof Plotly === "undefined") return;
  var fig = JSON.parse(el.textContent);
  Plotly.newPlot(target, fig.data, fig.layout, { displaylogo: false, responsive: true }).then(function () {
    target.setAttribute("data-drawn", "true");
  });
});
