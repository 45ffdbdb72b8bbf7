// Rows added and dropped around the reader without moving what they read: the served page's windows
// (static/session.js) and a one-file export's (static/export.js) both change the page above the viewport.

/**
 * Runs `change`, then scrolls so that the first of `rows` on screen before it is where it was.
 * @param {Iterable<Element>} rows the rows that may hold the reader's place, in order
 * @param {() => void} change
 */
export function keepingScroll(rows, change) {
  let ref = null;
  for (const row of rows) {
    if (row.getBoundingClientRect().bottom > 0) { ref = row; break; }
  }
  const before = ref ? ref.getBoundingClientRect().top : 0;
  change();
  if (ref?.isConnected) {
    const moved = ref.getBoundingClientRect().top - before;
    if (moved) window.scrollBy(0, moved);
  }
}
