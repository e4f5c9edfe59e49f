// The gold record, keyboard-first as the annotation page: j/k (or the arrows) move between slots,
// a, b, ... take the first, second, ... annotator's value for the current slot, Ctrl+Enter saves
// and opens the next open record. A key typed in a list or a text field stays there; Esc leaves it.
(function () {
  const form = document.getElementById("resolve-form");
  if (!form) return;
  const rows = Array.from(form.querySelectorAll("#gold-slots tbody tr[data-slot]"));
  let current = Math.max(0, rows.findIndex((row) => row.classList.contains("differs")));

  function focusRow(index) {
    if (!rows.length) return;
    current = Math.min(Math.max(index, 0), rows.length - 1);
    rows.forEach((row, k) => row.classList.toggle("current", k === current));
    rows[current].focus();
  }

  function take(button) {
    const row = button.closest("tr[data-slot]");
    const select = row.querySelector(`select[name="${row.dataset.slot}"]`);
    select.value = button.dataset.value;
    // the live preview listens for change on the choices (htmx)
    select.dispatchEvent(new Event("change", { bubbles: true }));
    row.querySelectorAll("button.take").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
  }

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button.take");
    if (button) { take(button); current = rows.indexOf(button.closest("tr")); return; }
    // a click on a row's text makes it the current row, as Tab onto it does (below)
    const row = event.target.closest("tr[data-slot]");
    if (row && !event.target.closest("select, input, textarea, a, button")) focusRow(rows.indexOf(row));
  });

  // the row the focus is in (reached by Tab, a click or a value's list) is the one a, b, ... take for
  form.addEventListener("focusin", (event) => {
    const index = rows.indexOf(event.target.closest("tr[data-slot]"));
    if (index >= 0 && index !== current) {
      current = index;
      rows.forEach((row, k) => row.classList.toggle("current", k === current));
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit(document.getElementById("resolve-next"));
      return;
    }
    const target = event.target;
    if (target.matches("input, select, textarea")) {
      if (event.key === "Escape") { target.blur(); focusRow(current); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (key === "j" || key === "ArrowDown") { event.preventDefault(); focusRow(current + 1); }
    else if (key === "k" || key === "ArrowUp") { event.preventDefault(); focusRow(current - 1); }
    else if (/^[a-h]$/.test(key)) {
      const button = rows[current] && rows[current].querySelector(`button.take[data-key="${key}"]`);
      if (button) { event.preventDefault(); take(button); }
    }
  });
  form.dataset.ready = "true";  // keys work from here on (tests wait for it)
})();
