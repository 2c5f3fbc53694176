// A small accessibility checker for the portal's pages, run in the browser by Playwright
// (`page.evaluate(source)`): it returns a list of violations, empty when the page passes.
// The rules (documented in docs/portal.md):
//   lang      <html> has a lang attribute (a BCP 47 tag)
//   title     the document has a non-empty <title>
//   name      every form control (input but hidden ones, select, textarea, button, progress,
//             meter) and every link has an accessible name: aria-labelledby, aria-label,
//             <label for>, a wrapping <label>, title, or (buttons, links) its text or value
//   alt       every <img> and <input type=image> has an alt attribute; [role=img] has a name
//   idref     ids are unique, and every id that for / aria-labelledby / aria-describedby
//             name exists (a broken reference silently loses the label)
//   contrast  every visible text (text nodes, and the values of text inputs) has a contrast
//             ratio of at least 4.5:1 against its background (WCAG 2.x formula; colours from
//             the computed styles, composited over the ancestors' backgrounds; a background
//             image counts as a failure because its colour cannot be known). Disabled controls
//             are exempt, as in WCAG; text visually hidden for screen readers (1 px) is skipped.
() => {
  "use strict";
  const MIN_RATIO = 4.5;
  const violations = [];
  const describe = (el) => {
    const id = el.id ? `#${el.id}` : "";
    const cls = typeof el.className === "string" && el.className ? `.${el.className.trim().split(/\s+/).join(".")}` : "";
    const text = (el.textContent || "").trim().slice(0, 40);
    return `${el.tagName.toLowerCase()}${id}${cls}${text ? ` "${text}"` : ""}`;
  };
  const fail = (rule, el, detail) => violations.push({ rule, element: el ? describe(el) : "document", detail });

  // ---- lang and title
  const lang = document.documentElement.getAttribute("lang") || "";
  if (!/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(lang)) fail("lang", document.documentElement, `lang="${lang}"`);
  if (!document.title.trim()) fail("title", null, "empty <title>");

  // ---- ids and references
  const ids = new Map();
  for (const el of document.querySelectorAll("[id]")) ids.set(el.id, (ids.get(el.id) || 0) + 1);
  for (const [id, n] of ids) if (n > 1) fail("idref", document.getElementById(id), `id "${id}" used ${n} times`);
  for (const el of document.querySelectorAll("label[for], [aria-labelledby], [aria-describedby]")) {
    const refs = [el.getAttribute("for"), el.getAttribute("aria-labelledby"), el.getAttribute("aria-describedby")];
    for (const ref of refs.filter(Boolean).join(" ").split(/\s+/)) {
      if (ref && !document.getElementById(ref)) fail("idref", el, `reference to missing id "${ref}"`);
    }
  }

  // ---- accessible names
  const textOf = (el) => (el.textContent || "").replace(/\s+/g, " ").trim();
  const nameOf = (el) => {
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) {
      const text = labelledby.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map(textOf).join(" ");
      if (text.trim()) return text;
    }
    const aria = (el.getAttribute("aria-label") || "").trim();
    if (aria) return aria;
    if (el.labels && el.labels.length) {
      const text = Array.from(el.labels).map(textOf).join(" ").trim();
      if (text) return text;
    }
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "input" && ["submit", "button", "reset"].includes(type)) return (el.value || "").trim();
    if (tag === "input" && type === "image") return (el.getAttribute("alt") || "").trim();
    if (tag === "button" || tag === "a" || el.getAttribute("role") === "button") {
      const text = textOf(el);
      if (text) return text;
      const imgAlt = Array.from(el.querySelectorAll("img[alt]")).map((i) => i.alt.trim()).join(" ").trim();
      if (imgAlt) return imgAlt;
    }
    return (el.getAttribute("title") || "").trim();
  };
  const controls = document.querySelectorAll(
    "input:not([type=hidden]), select, textarea, button, progress, meter, [role=button], [role=textbox], a[href]"
  );
  for (const el of controls) if (!nameOf(el)) fail("name", el, "no accessible name");

  // ---- images
  for (const el of document.querySelectorAll("img, input[type=image]")) {
    if (!el.hasAttribute("alt")) fail("alt", el, "missing alt attribute");
  }
  for (const el of document.querySelectorAll("[role=img]")) if (!nameOf(el)) fail("alt", el, "role=img without a name");

  // ---- contrast
  const parse = (value) => {
    const m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(value.trim());
    if (!m) return null;
    let a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return [parseFloat(m[1]), parseFloat(m[2]), parseFloat(m[3]), a];
  };
  const over = (top, bottom) => {
    // "source over" compositing of an rgba colour on an opaque one
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const background = (el) => {
    // the backgrounds from the element up to the root, composited from the bottom (white canvas)
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.backgroundImage && style.backgroundImage !== "none") return { unknown: describe(node) };
      const color = parse(style.backgroundColor);
      if (color === null) return { unknown: `unparsable background ${style.backgroundColor}` };
      if (color[3] > 0) layers.push(color);
      if (color[3] >= 1) break;
    }
    let result = [255, 255, 255, 1];
    for (const layer of layers.reverse()) result = over(layer, result);
    return { color: result };
  };
  const opacity = (el) => {
    let value = 1;
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) value *= parseFloat(getComputedStyle(node).opacity);
    return value;
  };
  const visible = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none" || el.closest("[hidden], [aria-hidden=true]")) return false;
    const rects = el.getClientRects();
    if (!rects.length) return false;
    const box = el.getBoundingClientRect();
    return box.width > 1 || box.height > 1; // 1 px boxes: text for screen readers only
  };
  const checkText = (el) => {
    if (el.closest(":disabled") || !visible(el)) return;
    const style = getComputedStyle(el);
    const fg = parse(style.color);
    const bg = background(el);
    if (fg === null) return fail("contrast", el, `unparsable colour ${style.color}`);
    if (bg.unknown) return fail("contrast", el, `background cannot be computed: ${bg.unknown}`);
    const alpha = fg[3] * opacity(el);
    const text = over([fg[0], fg[1], fg[2], alpha], bg.color);
    const r = ratio(text, bg.color);
    if (r < MIN_RATIO) fail("contrast", el, `contrast ${r.toFixed(2)}:1 < ${MIN_RATIO}:1 (${style.color} on rgb(${bg.color.slice(0, 3).map(Math.round).join(", ")}))`);
  };
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || seen.has(parent) || !node.textContent.trim()) continue;
    if (["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"].includes(parent.tagName)) continue;
    seen.add(parent);
    checkText(parent);
  }
  for (const el of document.querySelectorAll("input[type=text], input:not([type]), textarea, select")) {
    if ((el.value || "").trim()) checkText(el);
  }
  return violations;
}
