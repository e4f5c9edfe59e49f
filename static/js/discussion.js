// The discussion of an item (templates/discussion/_thread.html), on the annotation, conflict and
// gold pages. A comment refused by the server (400) is shown in place, with its reason, instead of
// being dropped as htmx drops an error. What is typed in a comment box stays there: its keys never
// reach the page's own single-key shortcuts (annotate.js, gold.js listen on the document), and
// Ctrl+Enter posts the comment rather than saving the annotation or the gold record. Escape still
// reaches the page, which leaves the box for the slots.
(function () {
  "use strict";
  if (window.discussionReady) return;  // the script may be included more than once
  window.discussionReady = true;

  document.addEventListener("htmx:beforeSwap", function (event) {
    const source = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (event.detail.xhr.status === 400 && source && source.closest(".discussion")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // After a post the thread is new: the box the comment came from is gone, so the focus goes to
  // the new box, ready for the next comment.
  document.addEventListener("htmx:afterSwap", function (event) {
    const thread = event.detail.target;
    if (!thread || thread.id !== "discussion-thread") return;
    const invalid = thread.querySelector(".error");
    const box = invalid ? invalid.closest("form").querySelector("textarea") : null;
    if (box) box.focus();
  });

  // capture, on the document: before the page's own listeners (bubbling, on the document) see it
  document.addEventListener("keydown", function (event) {
    const box = event.target instanceof Element ? event.target.closest(".discussion textarea") : null;
    if (!box) return;
    if (event.key === "Escape") return;
    event.stopPropagation();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      const button = box.form && box.form.querySelector("button[type=submit]");
      if (button) button.click();
    }
  }, true);
})();
