// Runs before first paint: apply a remembered theme choice (else the OS preference rules), the
// remembered "Show bookkeeping" (folds.js) so folds do not flash shut first, and the remembered "Details"
// (reading.js) so meta lines do not flash in or out. A classic script, loaded
// blocking in <head>, not a module: a module always runs deferred, after the page is drawn. It imports
// nothing and its names stay inside the function, so it sets no global.
(() => {
  try {
    const theme = localStorage.getItem("dsh-inspect-theme");
    if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
    if (localStorage.getItem("dsh-inspect-bookkeeping") === "shown") document.documentElement.dataset.showBookkeeping = "";
    if (localStorage.getItem("dsh-inspect-details") === "shown") document.documentElement.dataset.details = "";
  } catch { /* storage may be unavailable (file://, privacy mode): follow the OS */ }
})();
