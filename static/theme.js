// Runs before first paint: apply a remembered theme choice (else the OS preference rules), and the
// remembered "Show bookkeeping" (inspect.js) so folds do not flash shut first.
(function () {
  try {
    var theme = localStorage.getItem("dsh-inspect-theme");
    if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
    if (localStorage.getItem("dsh-inspect-bookkeeping") === "shown") document.documentElement.dataset.showBookkeeping = "";
  } catch (e) { /* storage may be unavailable (file://, privacy mode): follow the OS */ }
})();
