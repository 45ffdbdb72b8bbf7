// Bodies clipped to a scroll box (a context body's 141px, a message's or a tool card's cap): a box whose
// content runs past it is marked `data-clipped` (the stylesheet shades the edge that has more) and gets an
// "Expand" button after it that shows the whole body in place, and again "Collapse". An instructions body's
// chips (templates/forms/body.html) scroll its box to their file's section and mark it.

// the scroll boxes bodies are drawn in (static/inspect.css caps each)
const BOXES = ".ctx-body, .msg-body, .card-section, .command-pre, .card-pre";
// how dsh heads each file's part of an instructions message
const SECTION = "Instructions from: ";

const labels = document.body.dataset;

// A box's "Expand" goes at the end of its chips when it has them (one line under the box), else right after it.
/** @param {Element} box */
function chipsOf(box) {
  const next = box.nextElementSibling;
  return next?.hasAttribute("data-section-chips") ? next : null;
}
/** @param {Element} box */
function buttonOf(box) {
  const next = box.nextElementSibling;
  return next?.hasAttribute("data-expand-body") ? next : chipsOf(box)?.querySelector("[data-expand-body]") ?? null;
}
/** @param {Element} button */
function boxOf(button) {
  return (button.closest("[data-section-chips]") ?? button).previousElementSibling;
}

// A box inside another (a tool card's text in its section) goes with the outer one: one "Expand" for both, after
// the outer box, shown when either runs past its cap, and expanding the outer uncaps what it holds.
/** @param {Element} box */
function fit(box) {
  const outer = box.parentElement?.closest(BOXES);
  if (outer) { fit(outer); return; }
  if (box.hasAttribute("data-expanded")) return;
  let clipped = false;
  [box, ...box.querySelectorAll(BOXES)].forEach((el) => {
    const over = el.scrollHeight > el.clientHeight + 1;
    el.toggleAttribute("data-clipped", over);
    clipped ||= over;
  });
  const button = buttonOf(box);
  if (clipped && !button) {
    const made = document.createElement("button");
    made.type = "button";
    made.className = "expand-body";
    made.setAttribute("data-expand-body", "");
    made.setAttribute("aria-expanded", "false");
    made.textContent = labels.labelExpand || "";
    const chips = chipsOf(box);
    if (chips) chips.append(made); else box.after(made);
  } else if (!clipped && button) button.remove();
}

/** @param {Node} node */
function fitIn(node) {
  const around = node.parentElement?.closest(BOXES);  // more content come into a box ("Show all")
  if (around) { fit(around); return; }
  if (!(node instanceof Element)) return;
  if (node.matches(BOXES)) { fit(node); return; }
  node.querySelectorAll(BOXES).forEach((box) => { if (!box.parentElement?.closest(BOXES)) fit(box); });
}

/** @param {Element} button */
function expand(button) {
  const box = boxOf(button);
  if (!box) return;
  const open = button.getAttribute("aria-expanded") !== "true";
  box.toggleAttribute("data-expanded", open);
  button.setAttribute("aria-expanded", open ? "true" : "false");
  button.textContent = (open ? labels.labelCollapse : labels.labelExpand) || "";
  if (open) [box, ...box.querySelectorAll("[data-clipped]")].forEach((el) => { el.removeAttribute("data-clipped"); });
  else { fit(box); box.scrollIntoView({ block: "nearest" }); }
}

/**
 * The first place in `box`'s model-facing text where `path`'s section starts, marked.
 * @param {Element} box @param {string} path
 */
function markSection(box, path) {
  box.querySelectorAll("mark[data-section-mark]").forEach((mark) => { mark.replaceWith(...mark.childNodes); });
  box.normalize();
  const heading = SECTION + path;
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = /** @type {Text} */ (node);
    const at = text.data.indexOf(heading);
    if (at < 0 || !text.parentElement?.closest("[data-context-text]")) continue;
    const found = text.splitText(at);
    found.splitText(heading.length);
    const mark = document.createElement("mark");
    mark.setAttribute("data-section-mark", "");
    found.replaceWith(mark);
    mark.appendChild(found);
    return mark;
  }
  return null;
}

/** @param {Element} chip */
function jump(chip) {
  const chips = chip.closest("[data-section-chips]");
  const box = chips?.parentElement?.querySelector(".ctx-body");
  if (!chips || !box) return;
  const mark = markSection(box, chip.getAttribute("data-section-chip") || "");
  chips.querySelectorAll("[data-section-chip]").forEach((c) => { c.setAttribute("aria-pressed", c === chip && mark ? "true" : "false"); });
  if (!mark) return;
  if (box.hasAttribute("data-expanded")) { mark.scrollIntoView({ block: "center" }); return; }
  const top = parseFloat(getComputedStyle(box).paddingTop);
  box.scrollTop += mark.getBoundingClientRect().top - box.getBoundingClientRect().top - top;
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const button = target?.closest("[data-expand-body]");
  if (button) { expand(button); return; }
  const chip = target?.closest("[data-section-chip]");
  if (chip) jump(chip);
});

// bodies come with the page, with a disclosure opened (fetched, or copied from its template) and with windows
// of rows; a window resized can clip a body or free it
new MutationObserver((records) => {
  records.forEach((record) => { record.addedNodes.forEach(fitIn); });
}).observe(document.body, { childList: true, subtree: true });
fitIn(document.body);
// a <details> opened shows boxes that measured nothing while it was closed (toggle does not bubble: captured)
document.addEventListener("toggle", (event) => { if (event.target instanceof Node) fitIn(event.target); }, true);
let resizing = 0;
window.addEventListener("resize", () => {
  cancelAnimationFrame(resizing);
  resizing = requestAnimationFrame(() => { document.querySelectorAll(BOXES).forEach(fit); });
});
