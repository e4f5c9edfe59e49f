// The Jobs page: the train form shows only the fields its chosen method reads (each field says
// which in data-method; the others keep their defaults and are ignored by the job anyway).
(function () {
  "use strict";

  function showMethod(form) {
    const method = form.querySelector("select[name=method]");
    if (!method) return;
    form.querySelectorAll("[data-method]").forEach(function (field) {
      const row = field.closest("p") || field;
      row.hidden = field.dataset.method !== method.value;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    const form = document.getElementById("train-form");
    if (!form) return;
    showMethod(form);
    form.addEventListener("change", function (event) {
      if (event.target.name === "method") showMethod(form);
    });
  });
})();
