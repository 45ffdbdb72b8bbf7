// The timeline page (templates/timeline.html): a session's spans drawn on one canvas, a lane per kind, so the
// page holds a few DOM nodes at any length or zoom. The server sends each span's figures already worded
// (app/web/present/timeline.py); this module only draws, zooms, pans and opens a span's row (`?at=`).

/**
 * A span as the page carries it: its lane, start and end in ms from the session's first event (end null while
 * open), a model call's first token (ms, or null), the row anchor it opens, and its figures worded.
 * @typedef {[number, number, number | null, number | null, string | null, string]} Drawn
 * A lane: its colour's number (`--timeline-N`, the kind's place in history/spend/timing.py's SPAN_KINDS) and its name.
 * @typedef {{ lanes: [number, string][], end: number, spans: Drawn[] }} Timeline
 */

const LANE = 28;  // px per lane
const GUTTER = 132;  // px of lane names at the left, at most (a narrow screen gives them less)
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
  const spans = timeline.spans;
  const total = Math.max(timeline.end, ...spans.map((s) => s[2] ?? s[1]), 1);
  const context = canvas.getContext("2d");
  if (!context) return;
  const ctx = context;
  let from = 0;  // ms at the left edge
  let width = total;  // ms across the plot
  let focused = -1;  // the span focused by keyboard or hovered
  let dragged = /** @type {{ x: number, from: number } | null} */ (null);

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
    const right = x(span[2] ?? total);
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
    // each lane's colour looked up once a paint (the theme may have changed since), not once a span
    const colours = timeline.lanes.map(([number]) => colour(`--timeline-${number}`));
    const waiting = colour("--timeline-waiting");
    const background = colour("--page-bg");
    const ratio = window.devicePixelRatio || 1;
    const height = AXIS + LANE * timeline.lanes.length;
    canvas.style.height = `${height}px`;
    canvas.width = Math.round(canvas.clientWidth * ratio);
    canvas.height = Math.round(height * ratio);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, canvas.clientWidth, height);
    const ink = colour("--timeline-ink");
    ctx.font = `12px ${getComputedStyle(root).fontFamily}`;
    ctx.textBaseline = "middle";
    timeline.lanes.forEach(([, name], lane) => {
      ctx.fillStyle = lane % 2 ? colour("--timeline-band") : "transparent";
      ctx.fillRect(0, AXIS + lane * LANE, canvas.clientWidth, LANE);
      ctx.fillStyle = ink;
      ctx.fillText(name, 6, AXIS + lane * LANE + LANE / 2, gutter() - 10);
    });
    axis(ink);
    ctx.save();
    ctx.beginPath();
    ctx.rect(gutter(), 0, plotWidth(), height);
    ctx.clip();
    spans.forEach((span, i) => {
      const [left, right] = extent(span);
      if (right < gutter() || left > gutter() + plotWidth()) return;
      const top = AXIS + span[0] * LANE + 5;
      const tall = LANE - 10;
      ctx.fillStyle = colours[span[0]];
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
    // the time shown, in ms from the session's start: what a test (or a script) can read of the zoom
    root.setAttribute("data-view", `${Math.round(from)}-${Math.round(from + width)}`);
  }

  /** @param {string} ink */
  function axis(ink) {
    const every = niceStep(width / Math.max(plotWidth() / TICK, 2));
    ctx.fillStyle = ink;
    for (let t = Math.max(Math.ceil(from / every) * every, 0); t <= from + width; t += every) {
      const at = x(t);
      ctx.fillRect(at, AXIS - 4, 1, 4);
      if (at + TICK - 10 <= canvas.clientWidth) ctx.fillText(clock(t), at + 3, AXIS / 2, TICK - 10);
    }
  }

  /** @param {number} i */
  function show(i) {
    focused = i;
    tip.textContent = i >= 0 ? spans[i][5] : "";
    paint();
  }

  /** @param {number} i */
  function open(i) {
    const at = spans[i]?.[4];
    if (at) window.location.assign(`${base}?at=${encodeURIComponent(at)}`);
  }

  /** @param {MouseEvent} event @returns {number} the span under the pointer, or -1 */
  function hit(event) {
    const box = canvas.getBoundingClientRect();
    const px = event.clientX - box.left;
    const lane = Math.floor((event.clientY - box.top - AXIS) / LANE);
    for (let i = spans.length - 1; i >= 0; i--) {
      const [left, right] = extent(spans[i]);
      if (spans[i][0] === lane && px >= left - 2 && px <= right + 2) return i;
    }
    return -1;
  }

  /** @param {number} factor @param {number} centre ms that stays put */
  function zoom(factor, centre) {
    const next = Math.min(Math.max(width / factor, 5), total * 1.05);
    from = clamp(centre - ((centre - from) * next) / width, next);
    width = next;
    paint();
  }

  /** @param {number} start @param {number} span ms shown */
  function clamp(start, span) {
    return Math.min(Math.max(start, -span * 0.02), total - span * 0.98);
  }

  /** Pan so span `i` shows, then focus it. @param {number} i */
  function reach(i) {
    const span = spans[i];
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
    if (event.key === "+" || event.key === "=") zoom(ZOOM_STEP, focused >= 0 ? spans[focused][1] : middle);
    else if (event.key === "-" || event.key === "−") zoom(1 / ZOOM_STEP, middle);
    else if (event.key === "0") {
      from = 0;
      width = total;
      paint();
    } else if (event.shiftKey && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
      from = clamp(from + (event.key === "ArrowLeft" ? -1 : 1) * width * PAN_STEP, width);
      paint();
    } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      reach(Math.min(Math.max(focused + (event.key === "ArrowRight" ? 1 : -1), 0), spans.length - 1));
    } else if (event.key === "Enter" && focused >= 0) open(focused);
    else return;
    event.preventDefault();
  });
  canvas.addEventListener("focus", () => {
    if (focused < 0 && spans.length) reach(0);
  });
  paint();
  new ResizeObserver(paint).observe(canvas);
  root.setAttribute("data-timeline-ready", "");  // drawn
}

/** A round step for the axis near `rough` ms. @param {number} rough */
function niceStep(rough) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 18e5, 36e5, 72e5, 216e5, 864e5];
  return steps.find((s) => s >= rough) ?? rough;
}

/** ms from the session's start as h:mm:ss.mmm, shortened. @param {number} ms */
function clock(ms) {
  const whole = Math.floor(ms / 1000);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const rest = ms % 1000 ? `.${String(Math.round(ms % 1000)).padStart(3, "0")}` : "";
  return `${h ? `${h}:` : ""}${h ? String(m).padStart(2, "0") : m}:${String(s).padStart(2, "0")}${rest}`;
}
