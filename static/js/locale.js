// Viewer-locale niceties: the language switch submits on change, and every <time datetime> keeps
// the agent's own stamp as its text (the one time rule: times as the agent wrote them, with its
// UTC offset, as in its files) and shows the same instant in the viewer's zone on hover.
const lang = document.documentElement.lang || undefined;
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
function viewerTime(stamp) {
  const when = new Date(stamp);
  return isNaN(when) ? "" : when.toLocaleString(lang, { timeZoneName: "short" }) + " (" + zone + ")";
}
function localise(root) {
  root.querySelectorAll("time[datetime]").forEach((t) => {
    const local = t.dateTime && viewerTime(t.dateTime);
    if (local) t.title = local;
  });
}
document.addEventListener("change", (ev) => {
  const select = ev.target.closest(".language-switch select");
  if (select) select.form.requestSubmit();
});
localise(document);
document.addEventListener("htmx:afterSettle", (ev) => localise(ev.target));
