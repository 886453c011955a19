/* Makes the calculator nicer; the page works the same without it.
   - "Calculate" and "Convert" fetch the server-rendered form and answer
     (POST /calcular/fragmento) and swap them in, without reloading;
   - the language switch posts the whole form (the whole page changes);
   - the printable page gets a "Print" button. */
(function () {
  "use strict";

  function focusAfter(app, action) {
    var target = app.querySelector("#error-summary");
    if (!target && action === "convert") {
      target = app.querySelector("#f-creditable_service_years");
    }
    if (!target) {
      target = app.querySelector("#result-title");
    }
    if (target) {
      target.focus();
      target.scrollIntoView({ block: "start" });
    }
  }

  function setBusy(form, busy) {
    var buttons = form.querySelectorAll("button[type=submit]");
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = busy; });
    var primary = form.querySelector("button[data-busy-label]");
    if (primary) {
      if (busy) {
        primary.dataset.label = primary.textContent;
        primary.textContent = primary.dataset.busyLabel;
      } else if (primary.dataset.label) {
        primary.textContent = primary.dataset.label;
      }
    }
  }

  // Without the script, or when the fetch fails, the browser posts the form.
  function postNatively(form, action) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = "action";
    input.value = action;
    form.appendChild(input);
    HTMLFormElement.prototype.submit.call(form);
  }

  function onSubmit(app, event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.id !== "calc") { return; }
    var submitter = event.submitter;
    var action = submitter && submitter.name === "action" ? submitter.value : "calculate";
    if (action.indexOf("lang:") === 0) { return; }
    event.preventDefault();
    var data = new URLSearchParams(new FormData(form));
    data.set("action", action);
    setBusy(form, true);
    fetch(form.getAttribute("data-fragment"), {
      method: "POST",
      body: data,
      headers: { "Accept": "text/html" },
      credentials: "same-origin"
    }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.text();
    }).then(function (html) {
      app.innerHTML = html;
      var title = app.querySelector("#page-title");
      if (title) { document.title = title.getAttribute("data-title"); }
      focusAfter(app, action);
    }).catch(function () {
      setBusy(form, false);
      postNatively(form, action);
    });
  }

  function init() {
    var app = document.getElementById("app");
    if (app) {
      // Listening on the container: its content is replaced after each answer.
      app.addEventListener("submit", function (event) { onSubmit(app, event); });
    }
    var printNow = document.getElementById("print-now");
    if (printNow) {
      printNow.hidden = false;
      printNow.addEventListener("click", function () { window.print(); });
    }
  }

  // A link of the error summary: bring the whole field into view (its
  // question, help and message, not only the box), then put the cursor in it,
  // as GOV.UK's error summary does.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("#error-summary a[href^='#']") : null;
    if (!link) { return; }
    var input = document.getElementById(link.getAttribute("href").slice(1));
    var field = input ? input.closest(".field") : null;
    if (!field) { return; }
    event.preventDefault();
    field.scrollIntoView({ block: "start" });
    input.focus({ preventScroll: true });
  });

  init();
}());
