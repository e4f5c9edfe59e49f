// Keyboard-first annotation: every action has a key, shown on the page.
(function () {
  "use strict";
  const form = document.getElementById("annotation");
  if (!form) return;
  const started = Date.now();
  const slots = Array.from(form.querySelectorAll("fieldset.slotset"));
  let current = 0;

  function focusSlot(i, scroll = true) {
    current = Math.max(0, Math.min(slots.length - 1, i));
    slots.forEach((s, k) => s.classList.toggle("current", k === current));
    const checked = slots[current].querySelector("input:checked") || slots[current].querySelector("input");
    checked.focus({ preventScroll: true });
    if (scroll) slots[current].scrollIntoView({ block: "nearest" });
  }

  function markPrefill(fieldset) {
    const pre = fieldset.dataset.prefill;
    const state = fieldset.querySelector(".prefill-state");
    if (!pre || !state) return;
    const value = (fieldset.querySelector("input:checked") || {}).value;
    const changed = value !== pre;
    state.classList.toggle("changed", changed);
    state.classList.toggle("kept", !changed);
    state.textContent = changed ? interpolate(gettext("changed from %(value)s"), { value: pre }, true) : gettext("prefilled");
  }

  function markCurrent(i) {
    current = i;
    slots.forEach((s, k) => s.classList.toggle("current", k === i));
  }

  // A current slot shows its values' help, which moves them. A mouse or touch press focuses the
  // radio before the click lands, so mark the slot only once the click is done: otherwise the
  // value moves away from under the pointer and the click chooses nothing.
  let pressed = false;
  let deferred = null;
  document.addEventListener("pointerdown", () => { pressed = true; }, true);
  document.addEventListener("pointerup", () => {
    pressed = false;
    if (deferred !== null) {
      const i = deferred;
      deferred = null;
      setTimeout(() => markCurrent(i), 0);  // after this press's click event
    }
  }, true);

  // Undo: each slot change is remembered (slot, the value it had), and z or Ctrl+Z takes the last
  // one back.
  const chosen = slots.map((fieldset) => (fieldset.querySelector("input:checked") || {}).value);
  const changes = [];
  let undoing = false;

  function undo() {
    const last = changes.pop();
    if (!last) return;
    const radio = slots[last.slot].querySelector('input[type=radio][value="' + last.value + '"]');
    if (!radio) return;
    undoing = true;
    radio.click();
    undoing = false;
    focusSlot(last.slot);
  }

  slots.forEach((fieldset, i) => {
    fieldset.addEventListener("focusin", () => { if (pressed) { deferred = i; } else { markCurrent(i); } });
    fieldset.addEventListener("change", () => {
      markPrefill(fieldset);
      const value = (fieldset.querySelector("input:checked") || {}).value;
      if (!undoing && value !== chosen[i]) changes.push({ slot: i, value: chosen[i] });
      chosen[i] = value;
    });
  });

  // Drafts: what is chosen and not saved goes to the server as the annotator works (a second after
  // the last change), so that a link followed, a closed tab or another device loses nothing; and
  // leaving with a change the server does not have yet asks first.
  const draftState = document.getElementById("draft-state");
  let unsent = false;   // changed since the last draft the server took
  let timer = null;
  let saving = false;

  function sendDraft() {
    timer = null;
    if (saving) { timer = setTimeout(sendDraft, 300); return; }
    saving = true;
    unsent = false;
    const body = new FormData(form);
    fetch(form.dataset.draftUrl, { method: "POST", body: body, credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(String(response.status));
        if (draftState) {
          const now = new Date();
          const time = String(now.getHours()).padStart(2, "0") + ":" +
            String(now.getMinutes()).padStart(2, "0") + ":" + String(now.getSeconds()).padStart(2, "0");
          draftState.textContent = interpolate(gettext("draft kept %(time)s"), { time: time }, true);
        }
        form.dataset.draft = "kept";  // tests wait for it
      })
      .catch(() => { unsent = true; if (draftState) draftState.textContent = gettext("draft not kept: not saved"); })
      .finally(() => { saving = false; });
  }

  function changed() {
    unsent = true;
    form.dataset.draft = "pending";
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(sendDraft, 1000);
  }

  form.addEventListener("change", changed);
  form.addEventListener("input", changed);

  let submitting = false;
  // any form of the page sent on purpose (save, skip, discard the draft) leaves without asking
  document.addEventListener("submit", () => { submitting = true; }, true);
  window.addEventListener("beforeunload", (event) => {
    if (submitting || !(unsent || timer !== null || saving)) return;
    event.preventDefault();
    event.returnValue = "";  // the browser asks whether to leave with changes not kept
  });

  form.addEventListener("submit", () => {
    form.querySelector("input[name=time_spent_ms]").value = String(Date.now() - started);
  });

  function submitsOnEnter(target) {
    if (target === document.body || target === document.documentElement) return true;
    return form.contains(target) && target.matches("input[type=radio], input[type=checkbox], fieldset");
  }

  function toggleFlag(name) {
    const box = form.querySelector('input[name=flags][value="' + name + '"]');
    if (box) { box.click(); }
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text");
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      // Ctrl+Enter also submits from the residue and notes, but, like Enter, not from a link.
      if ((typing && form.contains(target)) || submitsOnEnter(target)) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (typing) {
      if (event.key === "Escape") { target.blur(); focusSlot(current); }
      return;  // Ctrl+Z in the residue or notes is the text's own undo
    }
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "z") {
      event.preventDefault();
      undo();
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const key = event.key;
    if (key === "ArrowDown" || key === "j") { event.preventDefault(); focusSlot(current + 1); }
    else if (key === "ArrowUp" || key === "k") { event.preventDefault(); focusSlot(current - 1); }
    else if (/^[1-9]$/.test(key)) {
      const radios = slots[current].querySelectorAll("input[type=radio]");
      const radio = radios[Number(key) - 1];
      if (radio) { event.preventDefault(); radio.click(); focusSlot(current + 1); }
    }
    else if (key === "Enter") {
      // Enter submits only from the form's own choices or the page itself: on a link or a
      // button (History, Skip, the menu) it does what that element does, never a save.
      if (submitsOnEnter(target)) { event.preventDefault(); form.requestSubmit(); }
    }
    else if (key === "r") { event.preventDefault(); document.getElementById("residue").focus(); }
    else if (key === "n") { event.preventDefault(); document.getElementById("notes").focus(); }
    else if (key === "t") { toggleFlag("two-construals"); }
    else if (key === "u") { toggleFlag("unrecoverable"); }
    else if (key === "o") { toggleFlag("out-of-scope"); }
    else if (key === "z") { event.preventDefault(); undo(); }
    else if (key === "x") { event.preventDefault(); document.getElementById("skip-form").requestSubmit(); }
  });

  // On a desktop width the item text sticks to the top while the slots scroll under it; the slots
  // scroll into view below it (scroll-margin-top in app.css reads this height).
  const itemText = document.getElementById("item-text");
  if (itemText && "ResizeObserver" in window) {
    new ResizeObserver(() => {
      document.documentElement.style.setProperty("--item-text-h", itemText.offsetHeight + "px");
    }).observe(itemText);
  }

  // A refused save opens on its comparison, above the slots: do not scroll it away.
  focusSlot(0, !document.getElementById("stale"));
  form.dataset.ready = "true";  // keys work from here on (tests wait for it)
})();
