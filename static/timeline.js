// The timeline page (templates/timeline.html): a session's spans drawn on one canvas, a lane per kind, so the
// page holds a few DOM nodes at any length or zoom. The server sends each span's figures already worded
// (app/web/present/timeline.py); this module only draws, zooms, pans, opens a span's row (`?at=`) and opens a
// subagent session's lanes in place, beneath the lane its title names.

/**
 * A span as the page carries it: its lane, start and end in ms from the session's first event (end null while
 * open), a model call's first token (ms, or null), the row anchor it opens, and its figures worded.
 * @typedef {[number, number, number | null, number | null, string | null, string]} Drawn
 * A lane: its colour's number (`--timeline-N`, the kind's place in history/spend/timing.py's SPAN_KINDS), its
 * name, and for a subagent session's lane that session's place in `children`.
 * @typedef {[number, string, number] | [number, string]} Lane
 * A subagent session opened in place: its page (where its spans' rows are), its lanes and its spans.
 * @typedef {{ url: string, lanes: Lane[], spans: Drawn[] }} Child
 * @typedef {{ lanes: Lane[], end: number, spans: Drawn[], children: Child[] }} Timeline
 * A row of the canvas: its lane, the colour's number of the subagent lane it is opened under (or -1), and the
 * subagent session it opens (or -1).
 * @typedef {{ lane: Lane, under: number, opens: number }} Row
 * A span where it is drawn now: the span, its row, and the page its transcript row is on.
 * @typedef {{ span: Drawn, row: number, page: string }} Placed
 */

const LANE = 28;  // px per lane
const GUTTER = 132;  // px of lane names at the left, at most (a narrow screen gives them less)
const INDENT = 14;  // px a subagent session's lane names are indented by
const TICK = 90;  // px between the axis's ticks, at least
const AXIS = 22;  // px of the time axis at the top
const MIN_WIDTH = 2;  // px: the narrowest a span is drawn, so a 1 ms tool run still shows
const ZOOM_STEP = 1.5;
const PAN_STEP = 0.2;  // of the visible width

const root = document.querySelector("[data-timeline]");
const canvas = root?.querySelector("[data-timeline-canvas]");
const data = root?.querySelector("[data-timeline-data]");
const tip = root?.querySelector("[data-timeline-tip]");
if (root && canvas instanceof HTMLCanvasElement && data && tip instanceof HTMLElement) {
  draw(root, canvas, /** @type {Timeline} */ (JSON.parse(data.textContent || "{}")), tip);
}

/**
 * @param {Element} root @param {HTMLCanvasElement} canvas @param {Timeline} timeline @param {HTMLElement} tip
 */
function draw(root, canvas, timeline, tip) {
  const base = root.getAttribute("data-session-url") || "";
  const toggles = [...root.querySelectorAll("button[data-timeline-child]")].filter(
    (b) => b instanceof HTMLButtonElement,
  );
  const context = canvas.getContext("2d");
  if (!context) return;
  const ctx = context;
  const opened = new Set();  // the subagent sessions shown in place, by their place in `children`
  let rows = /** @type {Row[]} */ ([]);
  let placed = /** @type {Placed[]} */ ([]);  // in start order: what ← and → step through
  let lo = 0;  // ms: the earliest and latest time drawn (a subagent may run past its parent's last event)
  let hi = 1;
  let from = 0;  // ms at the left edge
  let width = 1;  // ms across the plot
  let focused = -1;  // the span focused by keyboard or hovered, in `placed`
  let dragged = /** @type {{ x: number, from: number } | null} */ (null);

  /** The rows and the spans on them: the session's lanes, each opened subagent session's beneath its own. */
  function layout() {
    rows = [];
    placed = [];
    const rowOf = timeline.lanes.map((lane) => {
      const row = rows.push({ lane, under: -1, opens: lane[2] ?? -1 }) - 1;
      const child = lane[2] === undefined ? undefined : timeline.children[lane[2]];
      if (child && opened.has(lane[2])) {
        const first = rows.length;
        for (const nested of child.lanes) rows.push({ lane: nested, under: lane[0], opens: -1 });
        for (const span of child.spans) placed.push({ span, row: first + span[0], page: child.url });
      }
      return row;
    });
    for (const span of timeline.spans) placed.push({ span, row: rowOf[span[0]], page: base });
    placed.sort((a, b) => a.span[1] - b.span[1]);
    const whole = from === lo && width === hi - lo;
    lo = 0;
    hi = Math.max(timeline.end, 1);
    for (const { span } of placed) {
      lo = Math.min(lo, span[1]);
      hi = Math.max(hi, span[2] ?? span[1]);
    }
    if (whole || width > hi - lo) {
      from = lo;
      width = hi - lo;
    }
  }

  function gutter() {
    return Math.min(GUTTER, canvas.clientWidth * 0.28);
  }

  function plotWidth() {
    return Math.max(canvas.clientWidth - gutter(), 50);
  }

  /** @param {number} ms */
  function x(ms) {
    return gutter() + ((ms - from) / width) * plotWidth();
  }

  /** @param {Drawn} span @returns {[number, number]} left and right, px */
  function extent(span) {
    const left = x(span[1]);
    const right = x(span[2] ?? hi);
    return [left, Math.max(right, left + MIN_WIDTH)];
  }

  // a colour property as the canvas takes it: the theme's `light-dark()` resolved, through a probe's `color`
  const probe = document.createElement("span");
  probe.hidden = true;
  root.append(probe);
  /** @param {string} name */
  function colour(name) {
    probe.style.color = `var(${name})`;
    return getComputedStyle(probe).color;
  }

  function paint() {
    // each lane colour looked up once a paint (the theme may have changed since), not once a span
    const colours = new Map(rows.map(({ lane }) => [lane[0], ""]));
    for (const number of colours.keys()) colours.set(number, colour(`--timeline-${number}`));
    const waiting = colour("--timeline-waiting");
    const background = colour("--page-bg");
    const band = colour("--timeline-band");
    const ratio = window.devicePixelRatio || 1;
    const height = AXIS + LANE * rows.length;
    canvas.style.height = `${height}px`;
    canvas.width = Math.round(canvas.clientWidth * ratio);
    canvas.height = Math.round(height * ratio);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, canvas.clientWidth, height);
    const ink = colour("--timeline-ink");
    ctx.font = `12px ${getComputedStyle(root).fontFamily}`;
    ctx.textBaseline = "middle";
    rows.forEach(({ lane, under, opens }, row) => {
      const top = AXIS + row * LANE;
      ctx.fillStyle = row % 2 ? band : "transparent";
      ctx.fillRect(0, top, canvas.clientWidth, LANE);
      if (under >= 0) {  // a subagent session's lane: a rule in the subagent's colour, its name indented
        ctx.fillStyle = colour(`--timeline-${under}`);
        ctx.fillRect(INDENT / 2, top, 2, LANE);
      }
      if (opens >= 0) return;  // its name is the button over it
      ctx.fillStyle = ink;
      const indent = under >= 0 ? INDENT : 0;
      ctx.fillText(lane[1], 6 + indent, top + LANE / 2, gutter() - 10 - indent);
    });
    axis(ink);
    ctx.save();
    ctx.beginPath();
    ctx.rect(gutter(), 0, plotWidth(), height);
    ctx.clip();
    placed.forEach(({ span, row }, i) => {
      const [left, right] = extent(span);
      if (right < gutter() || left > gutter() + plotWidth()) return;
      const top = AXIS + row * LANE + 5;
      const tall = LANE - 10;
      ctx.fillStyle = colours.get(rows[row].lane[0]) || ink;
      ctx.fillRect(left, top, right - left, tall);
      if (span[3] !== null) {  // a model call: its wait for the first token lighter than its decoding
        ctx.fillStyle = waiting;
        ctx.fillRect(left, top, Math.max(x(span[3]) - left, 0), tall);
      }
      if (span[2] === null) {  // still open when the log ends: a ragged right edge
        ctx.fillStyle = background;
        for (let y = top; y < top + tall; y += 6) ctx.fillRect(right - 3, y, 3, 3);
      }
      if (i === focused) {
        ctx.strokeStyle = ink;
        ctx.lineWidth = 2;
        ctx.strokeRect(left - 1, top - 1, right - left + 2, tall + 2);
      }
    });
    ctx.restore();
    place();
    // the time shown, in ms from the session's start: what a test (or a script) can read of the zoom
    root.setAttribute("data-view", `${Math.round(from)}-${Math.round(from + width)}`);
  }

  /** Each subagent session's button over its lane's name. */
  function place() {
    for (const button of toggles) {
      const row = rows.findIndex((r) => r.opens === Number(button.dataset.timelineChild));
      button.style.top = `${canvas.offsetTop + AXIS + row * LANE + 3}px`;
      button.style.left = `${canvas.offsetLeft + 3}px`;
      button.style.width = `${gutter() - 8}px`;
      button.style.height = `${LANE - 6}px`;
    }
  }

  /** @param {string} ink */
  function axis(ink) {
    const every = niceStep(width / Math.max(plotWidth() / TICK, 2));
    ctx.fillStyle = ink;
    for (let t = Math.max(Math.ceil(from / every) * every, lo); t <= from + width; t += every) {
      const at = x(t);
      ctx.fillRect(at, AXIS - 4, 1, 4);
      if (at + TICK - 10 <= canvas.clientWidth) ctx.fillText(clock(t), at + 3, AXIS / 2, TICK - 10);
    }
  }

  /** @param {number} i */
  function show(i) {
    focused = i;
    tip.textContent = i >= 0 ? placed[i].span[5] : "";
    paint();
  }

  /** @param {number} i */
  function open(i) {
    const at = placed[i]?.span[4];
    if (at) window.location.assign(`${placed[i].page}?at=${encodeURIComponent(at)}`);
  }

  /** Open or close subagent session `child`'s lanes, the focused span kept (none if it was one of them).
   * @param {number} child */
  function toggle(child) {
    const kept = placed[focused]?.span;
    if (!opened.delete(child)) opened.add(child);
    layout();
    focused = placed.findIndex((p) => p.span === kept);
    for (const button of toggles) {
      button.setAttribute("aria-expanded", String(opened.has(Number(button.dataset.timelineChild))));
    }
    show(focused);
  }

  /** @param {MouseEvent} event @returns {number} the span under the pointer, or -1 */
  function hit(event) {
    const box = canvas.getBoundingClientRect();
    const px = event.clientX - box.left;
    const row = Math.floor((event.clientY - box.top - AXIS) / LANE);
    for (let i = placed.length - 1; i >= 0; i--) {
      const [left, right] = extent(placed[i].span);
      if (placed[i].row === row && px >= left - 2 && px <= right + 2) return i;
    }
    return -1;
  }

  /** @param {number} factor @param {number} centre ms that stays put */
  function zoom(factor, centre) {
    const next = Math.min(Math.max(width / factor, 5), (hi - lo) * 1.05);
    from = clamp(centre - ((centre - from) * next) / width, next);
    width = next;
    paint();
  }

  /** @param {number} start @param {number} span ms shown */
  function clamp(start, span) {
    return Math.min(Math.max(start, lo - span * 0.02), hi - span * 0.98);
  }

  /** Pan so span `i` shows, then focus it. @param {number} i */
  function reach(i) {
    const span = placed[i].span;
    if (span[1] < from || span[1] > from + width) from = clamp(span[1] - width * 0.1, width);
    show(i);
  }

  canvas.addEventListener("mousemove", (event) => {
    if (dragged) {
      from = clamp(dragged.from - ((event.clientX - dragged.x) / plotWidth()) * width, width);
      paint();
      return;
    }
    const i = hit(event);
    canvas.style.cursor = i >= 0 ? "pointer" : "grab";
    if (i !== focused) show(i);
  });
  canvas.addEventListener("mousedown", (event) => {
    dragged = { x: event.clientX, from };
  });
  window.addEventListener("mouseup", () => {
    dragged = null;
  });
  canvas.addEventListener("click", (event) => {
    const i = hit(event);
    if (i >= 0) open(i);
  });
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = canvas.getBoundingClientRect();
    const centre = from + ((event.clientX - box.left - gutter()) / plotWidth()) * width;
    zoom(event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, centre);
  }, { passive: false });
  canvas.addEventListener("keydown", (event) => {
    const middle = from + width / 2;
    const opens = focused >= 0 ? rows[placed[focused].row].opens : -1;
    if (event.key === "+" || event.key === "=") zoom(ZOOM_STEP, focused >= 0 ? placed[focused].span[1] : middle);
    else if (event.key === "-" || event.key === "−") zoom(1 / ZOOM_STEP, middle);
    else if (event.key === "0") {
      from = lo;
      width = hi - lo;
      paint();
    } else if (event.shiftKey && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
      from = clamp(from + (event.key === "ArrowLeft" ? -1 : 1) * width * PAN_STEP, width);
      paint();
    } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      reach(Math.min(Math.max(focused + (event.key === "ArrowRight" ? 1 : -1), 0), placed.length - 1));
    } else if (event.key === "Enter" && focused >= 0) open(focused);
    else if (event.key === " " && opens >= 0) toggle(opens);  // a subagent's span opens its session's lanes
    else return;
    event.preventDefault();
  });
  canvas.addEventListener("focus", () => {
    if (focused < 0 && placed.length) reach(0);
  });
  for (const button of toggles) {
    button.addEventListener("click", () => toggle(Number(button.dataset.timelineChild)));
  }
  layout();
  paint();
  new ResizeObserver(paint).observe(canvas);
  root.setAttribute("data-timeline-ready", "");  // drawn
}

/** A round step for the axis near `rough` ms. @param {number} rough */
function niceStep(rough) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 18e5, 36e5, 72e5, 216e5, 864e5];
  return steps.find((s) => s >= rough) ?? rough;
}

/** ms from the session's start as h:mm:ss.mmm, shortened; before it (a clock that ran backwards), signed once.
 * @param {number} ms @returns {string} */
function clock(ms) {
  if (ms < 0) return `−${clock(-ms)}`;
  const whole = Math.floor(ms / 1000);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const rest = ms % 1000 ? `.${String(Math.round(ms % 1000)).padStart(3, "0")}` : "";
  return `${h ? `${h}:` : ""}${h ? String(m).padStart(2, "0") : m}:${String(s).padStart(2, "0")}${rest}`;
}
