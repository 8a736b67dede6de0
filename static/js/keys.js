// Site-wide keys on pages without their own (the canvas page has a fuller set in canvas.js):
// "?" opens the help, "/" goes to the search box.
function siteKeys(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || document.querySelector("dialog[open]")) return;
  if (ev.target.closest("input, textarea, select, [contenteditable]")) return;
  if (ev.key === "?") {
    const help = document.getElementById("site-help");
    if (help) { ev.preventDefault(); help.showModal(); }
  } else if (ev.key === "/") {
    const search = document.querySelector(".topbar .search input");
    if (search) { ev.preventDefault(); search.focus(); }
  }
}

if (!document.getElementById("shortcut-help")) document.addEventListener("keydown", siteKeys); // canvas.js handles its page's keys
