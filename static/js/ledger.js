// The token ledger over time, drawn with uPlot: cumulative refs and summaries, and the canvas and
// injected block as they stood, on a log scale (refs are often 100x the canvas).
const box = document.getElementById("ledger-chart");
const series = JSON.parse(document.getElementById("ledger-series").textContent);
if (!box || !series.t.length) document.body.dataset.ledgerChart = "empty";
else chart(box, series);

function chart(box, series) {
  const pos = (values) => values.map((v) => (v > 0 ? v : null));
  const labels = box.dataset;
  // The one time rule: the axis shows the agent's own clock (its UTC offset), as its stamps do.
  const offset = series.utc_offset_minutes;
  const agentClock = (ts) => {
    const shifted = new Date(ts * 1e3 + offset * 60000);
    return new Date(shifted.getTime() + shifted.getTimezoneOffset() * 60000);
  };
  const zone = offset === null || offset === undefined ? "" : " (UTC" + (offset < 0 ? "−" : "+") +
    String(Math.floor(Math.abs(offset) / 60)).padStart(2, "0") + ":" + String(Math.abs(offset) % 60).padStart(2, "0") + ")";
  const options = {
    width: Math.max(320, box.clientWidth),
    height: 340,
    scales: { y: { distr: 3 } },
    axes: [{}, { label: labels.labelsTokens, size: 70 }],
    ...(zone ? { tzDate: agentClock } : {}),
    series: [
      { label: labels.labelsTime + zone },
      { label: labels.labelsRefs, stroke: "#c0392b", width: 2 },
      { label: labels.labelsSummaries, stroke: "#2f6fdd", width: 2 },
      { label: labels.labelsCanvas, stroke: "#1a8a4a", width: 2 },
      { label: labels.labelsBlock, stroke: "#8e44ad", width: 2, dash: [6, 4] },
    ],
  };
  const plot = new uPlot(options, [series.t, pos(series.refs), pos(series.summaries), pos(series.canvas), pos(series.block)], box);
  window.addEventListener("resize", () => plot.setSize({ width: Math.max(320, box.clientWidth), height: 340 }));
  document.body.dataset.ledgerChart = "ok";
}
