// Every page: a box that scrolls sideways (a wide table on a phone) can be reached and scrolled
// from the keyboard. It gets tabindex=0 while it scrolls, and loses it when the window widens.
(function () {
  "use strict";

  function reachable() {
    document.querySelectorAll("main table, main .scroll").forEach(function (box) {
      const scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.tabIndex = 0;
        box.dataset.scrollFocus = "1";
      } else if (!scrolls && box.dataset.scrollFocus) {
        box.removeAttribute("tabindex");
        delete box.dataset.scrollFocus;
      }
    });
  }

  let pending = 0;
  function soon() {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(reachable);
  }

  document.addEventListener("DOMContentLoaded", reachable);
  window.addEventListener("resize", soon);
  document.addEventListener("htmx:afterSettle", soon);
})();
