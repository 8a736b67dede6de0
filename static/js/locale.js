// Viewer-locale niceties: the language switch submits on change, and <time data-local> shows its
// instant in the viewer's language and time zone (the title keeps the stamp as written).
(function () {
  "use strict";
  const lang = document.documentElement.lang || undefined;
  function localise(root) {
    root.querySelectorAll("time[data-local]").forEach((t) => {
      const when = new Date(t.dateTime);
      if (!t.dateTime || isNaN(when)) return;
      t.title = t.dateTime;
      t.textContent = when.toLocaleString(lang);
    });
  }
  document.addEventListener("change", (ev) => {
    const select = ev.target.closest(".language-switch select");
    if (select) select.form.requestSubmit();
  });
  localise(document);
  document.addEventListener("htmx:afterSettle", (ev) => localise(ev.target));
})();
