// Runs before first paint: apply a remembered theme choice (else the OS preference rules).
(function () {
  try {
    var theme = localStorage.getItem("dsh-inspect-theme");
    if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
  } catch (e) { /* storage may be unavailable (file://, privacy mode): follow the OS */ }
})();
