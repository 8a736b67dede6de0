// UI text in the viewer's language for the other scripts: the spans of base.html's #ui-strings
// (templates/_ui_strings.html), with {name} placeholders filled (the key itself if a page lacks the span).
export function t(key, values) {
  const strings = document.getElementById("ui-strings");
  const el = strings && strings.content.querySelector(`[data-k="${key}"]`);
  let text = el ? el.textContent : key;
  for (const [name, value] of Object.entries(values || {})) text = text.split(`{${name}}`).join(String(value));
  return text;
}
