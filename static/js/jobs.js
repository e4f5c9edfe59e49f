// The Jobs page: the train form shows only the fields its chosen method reads (each field says
// which in data-method; the others keep their defaults and are ignored by the job anyway), and
// choosing a trained parser in the prefill form sets the backend that runs it (data-backend).
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

  function followParser(form) {
    const parser = form.querySelector("select[name=parser]");
    const backend = form.querySelector("select[name=backend]");
    if (!parser || !backend) return;
    const chosen = parser.selectedOptions[0];
    if (chosen && chosen.dataset.backend) backend.value = chosen.dataset.backend;
  }

  document.addEventListener("DOMContentLoaded", function () {
    const train = document.getElementById("train-form");
    if (train) {
      showMethod(train);
      train.addEventListener("change", function (event) {
        if (event.target.name === "method") showMethod(train);
      });
    }
    const prefill = document.getElementById("prefill-form");
    if (prefill) {
      prefill.addEventListener("change", function (event) {
        if (event.target.name === "parser") followParser(prefill);
      });
    }
  });
})();
