// Export: the current view or the whole canvas as a standalone SVG or a PNG (of whichever
// renderer is shown), and the mermaid text as mermaid.js draws it (canvas-mermaid.js; the agent's
// own bytes are a plain download link of the page). The SVG carries its own style (the page's colours resolved for the
// current light/dark theme) and the font slices its labels use as data: URLs, so it looks the
// same anywhere, CJK included, and no remote font is ever fetched.
import { canvas } from "./canvas.js";
import { mermaidView } from "./canvas-mermaid.js";

const PAD = 16;
const MAX_SIDE = 8192, MAX_AREA = 40e6;

function ranges(text) {
  return text.split(",").map((r) => r.trim().replace(/^U\+/i, "")).filter(Boolean).map((r) => {
    if (r.includes("?")) return [parseInt(r.replace(/\?/g, "0"), 16), parseInt(r.replace(/\?/g, "F"), 16)];
    const [a, b] = r.split("-");
    return [parseInt(a, 16), parseInt(b || a, 16)];
  });
}
function fontRules() {
  const out = [];
  for (const sheet of document.styleSheets) {
    let rules;
    try { rules = sheet.cssRules; } catch (e) { continue; }
    for (const r of rules) if (r instanceof CSSFontFaceRule) out.push(r);
  }
  return out;
}
function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
// The @font-face rules whose unicode-range meets the text, with their files inlined.
async function embeddedFonts(text) {
  const codes = new Set();
  for (const ch of text) codes.add(ch.codePointAt(0));
  const wanted = fontRules().filter((r) => {
    const range = r.style.getPropertyValue("unicode-range");
    if (!range) return true;
    return ranges(range).some(([a, b]) => { for (const c of codes) if (c >= a && c <= b) return true; return false; });
  });
  const faces = await Promise.all(wanted.map(async (r) => {
    const m = /url\(["']?([^"')]+\.woff2)["']?\)/.exec(r.style.getPropertyValue("src"));
    if (!m) return "";
    const url = new URL(m[1], r.parentStyleSheet.href || location.href).href;
    const response = await fetch(url);
    if (!response.ok) return "";
    const family = r.style.getPropertyValue("font-family");
    const range = r.style.getPropertyValue("unicode-range");
    return `@font-face{font-family:${family};font-style:normal;font-weight:400;src:url(data:font/woff2;base64,${base64(await response.arrayBuffer())}) format("woff2");${range ? `unicode-range:${range};` : ""}}`;
  }));
  return faces.filter(Boolean).join("\n");
}
// The page's rules for the drawing, with every colour variable resolved to its current value.
function drawingCss() {
  const rules = [];
  for (const sheet of document.styleSheets) {
    let list;
    try { list = sheet.cssRules; } catch (e) { continue; }
    for (const r of list) if (r.selectorText && /(^|[\s,])(svg)?\.mc(?![\w-])/.test(r.selectorText) && !/lod-far|selected|hit|focus/.test(r.selectorText)) rules.push(r.cssText);
  }
  const css = rules.join("\n");
  const root = getComputedStyle(document.documentElement);
  const vars = [...new Set(css.match(/--[\w-]+/g) || [])].map((v) => `${v}:${root.getPropertyValue(v).trim()}`);
  return `svg.mc{${vars.join(";")}}\n${css}`;
}

// The whole drawing in drawing units: the nodes' box, and whatever is drawn outside it (an
// edge curving above the first row, its label), from the live SVG's own geometry.
function wholeRect(content, model) {
  let x0 = 0, y0 = 0, x1 = model.width, y1 = model.height;
  try {
    const b = content.getBBox();
    x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.width); y1 = Math.max(y1, b.y + b.height);
  } catch (e) { /* not rendered: the nodes' box */ }
  return { x: x0 - PAD, y: y0 - PAD, w: x1 - x0 + 2 * PAD, h: y1 - y0 + 2 * PAD };
}

async function buildSvg(whole) {
  if (mermaidView.active()) return mermaidView.buildSvg(whole, PAD);
  const view = canvas.view(), model = canvas.model();
  const live = document.querySelector("#diagram .mermaid-host svg");
  if (!view || !model || !live) throw new Error("nothing drawn yet");
  view.labelAll();
  const svg = live.cloneNode(true);
  const content = svg.querySelector(".mc-content");
  content.removeAttribute("transform");
  content.removeAttribute("style");
  svg.removeAttribute("style");
  svg.classList.remove("lod-far", "moving");
  svg.querySelectorAll(".mc-view-state").forEach((el) => el.remove());
  svg.querySelectorAll(".selected, .hit, .has-hit").forEach((el) => el.classList.remove("selected", "hit", "has-hit"));
  svg.querySelectorAll("[tabindex]").forEach((el) => el.removeAttribute("tabindex"));
  const r = whole ? wholeRect(live.querySelector(".mc-content"), model) : view.visibleRect();
  svg.setAttribute("viewBox", `${r.x} ${r.y} ${r.w} ${r.h}`);
  const scale = whole ? 1 : view.scale();
  svg.setAttribute("width", Math.round(r.w * scale));
  svg.setAttribute("height", Math.round(r.h * scale));
  svg.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  const ns = "http://www.w3.org/2000/svg";
  const bg = document.createElementNS(ns, "rect");
  bg.setAttribute("class", "mc-background");
  Object.entries({ x: r.x, y: r.y, width: r.w, height: r.h }).forEach(([k, v]) => bg.setAttribute(k, v));
  bg.setAttribute("style", `fill:${getComputedStyle(document.documentElement).getPropertyValue("--canvas-bg").trim() || "#fff"}`);
  content.insertBefore(bg, content.firstChild);
  const style = document.createElementNS(ns, "style");
  style.textContent = (await embeddedFonts(svg.textContent)) + "\n" + drawingCss();
  svg.insertBefore(style, svg.firstChild);
  return { text: new XMLSerializer().serializeToString(svg), width: r.w * scale, height: r.h * scale };
}

async function toPng(svgText, width, height) {
  const k = Math.min(2, MAX_SIDE / width, MAX_SIDE / height, Math.sqrt(MAX_AREA / (width * height)));
  const img = new Image();
  img.src = "data:image/svg+xml;base64," + base64(new TextEncoder().encode(svgText));
  await img.decode();
  const c = document.createElement("canvas");
  c.width = Math.max(1, Math.round(width * k));
  c.height = Math.max(1, Math.round(height * k));
  const g = c.getContext("2d");
  // The image loads its embedded fonts on its own after decoding, and draws text only once
  // they are in: draw until two draws in a row give the same pixels (at most ~2 s).
  let last = null;
  for (let i = 0; i < 20; i++) {
    g.clearRect(0, 0, c.width, c.height);
    g.drawImage(img, 0, 0, c.width, c.height);
    const sum = checksum(g, c.width, c.height);
    if (sum === last) break;
    last = sum;
    await new Promise((r) => setTimeout(r, 100));
  }
  return new Promise((resolve) => c.toBlob(resolve, "image/png"));
}

function checksum(g, w, h) {
  const step = Math.max(1, Math.floor(Math.sqrt((w * h) / 250000)));
  const data = g.getImageData(0, 0, w, h).data;
  let sum = 0;
  for (let i = 0; i < data.length; i += 4 * step) sum = (sum * 31 + data[i] + data[i + 1] * 3 + data[i + 3] * 7) % 1000000007;
  return sum;
}

function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

async function run(kind) {
  const diagram = document.getElementById("diagram");
  const stem = (diagram && diagram.dataset.file ? diagram.dataset.file : "canvas").replace(/\.mmd$/, "");
  document.body.dataset.exporting = kind;
  try {
    if (kind === "mermaid") {
      // the text mermaid.js draws: the agent's own, memviz's status colours only when asked
      download(new Blob([await mermaidView.text()], { type: "text/plain;charset=utf-8" }), `${stem}.render.mmd`);
      return;
    }
    const whole = kind.startsWith("all");
    const built = await buildSvg(whole);
    const name = `${stem}-${whole ? "canvas" : "view"}`;
    if (kind.endsWith("svg")) download(new Blob([built.text], { type: "image/svg+xml" }), name + ".svg");
    else download(await toPng(built.text, built.width, built.height), name + ".png");
  } finally {
    delete document.body.dataset.exporting;
  }
}

document.addEventListener("click", (ev) => {
  const b = ev.target.closest && ev.target.closest("[data-export], [data-export-raw]");
  if (!b) return;
  const menu = b.closest("details");
  if (menu) menu.open = false;
  if (!b.dataset.export) return; // the agent's file: the link downloads it as it is
  run(b.dataset.export).catch((err) => { document.body.dataset.exportError = String(err && err.message || err); });
});

export { buildSvg, toPng, run };
