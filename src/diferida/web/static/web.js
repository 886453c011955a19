/* Makes the calculator nicer; the page works the same without it.
   - "Calculate" and "Convert" fetch the server-rendered form and answer
     (POST /calcular/fragmento) and swap them in, without reloading;
   - the language switch posts the whole form (the whole page changes);
   - each date is written back in words beside its boxes as it is typed;
   - the printable page gets a "Print" button. */
(function () {
  "use strict";

  function focusAfter(app, action) {
    var target = app.querySelector("#error-summary");
    if (!target && action === "calculate") {
      target = app.querySelector("#date-question-title");  // the month-first guard asks
    }
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

  // Without the script, or when the fetch fails, the browser posts the form
  // (with the button's own value: a date chosen by the month-first guard).
  function postNatively(form, action, submitter) {
    var posted = [["action", action]];
    if (submitter && submitter.name && submitter.name !== "action") {
      posted.push([submitter.name, submitter.value]);
    }
    posted.forEach(function (pair) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = pair[0];
      input.value = pair[1];
      form.appendChild(input);
    });
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
    if (submitter && submitter.name && submitter.name !== "action") {
      data.set(submitter.name, submitter.value);  // a date the person chose
    }
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
      rememberAnswer(app);
      watchDates(app);
      watchEntryDate(app);
      focusAfter(app, action);
    }).catch(function () {
      setBusy(form, false);
      postNatively(form, action, submitter);
    });
  }

  // The answer has a page of its own (/resultado/<token>, no personal data
  // in it): put it in the history, so that Back and reload keep the answer.
  // Already at that address (the page was loaded from it): nothing to put,
  // and the address keeps its #fragment ("Ver esa fecha" lands on the
  // scenario panel, its typed row focused, as without the script).
  function rememberAnswer(app) {
    var result = app.querySelector("[data-result-url]");
    var url = result ? result.getAttribute("data-result-url") : null;
    if (url && url !== window.location.pathname && window.history &&
        window.history.replaceState) {
      window.history.replaceState(null, "", url);
    }
  }

  // The date a date's three boxes say, as the server reads it (web/lenient.py):
  // the day, the month (a number or its name: the words of the fieldset's
  // data-date-words) and the year of 4 digits; null while they say none.
  function wordsOf(fieldset) {
    try { return JSON.parse(fieldset.getAttribute("data-date-words")); } catch (e) { return null; }
  }

  function monthOf(text, words) {
    var t = text.trim().toLowerCase();
    if (/^\d{1,2}$/.test(t)) { return +t >= 1 && +t <= 12 ? +t : null; }
    if (t.normalize) { t = t.normalize("NFD").replace(/[\u0300-\u036f]/g, ""); }
    t = t.replace(/\.$/, "").trim();
    for (var i = 0; i < words.month_words.length; i++) {
      if (words.month_words[i].indexOf(t) >= 0) { return i + 1; }
    }
    return null;
  }

  function daysIn(year, month) {
    var leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  }

  function dateOf(fieldset) {
    var words = wordsOf(fieldset);
    var boxes = fieldset.querySelectorAll(".date-box input");
    if (!words || boxes.length !== 3) { return null; }
    var day = boxes[0].value.trim(), month = monthOf(boxes[1].value, words);
    var year = boxes[2].value.trim();
    if (!/^\d{1,2}$/.test(day) || !month || !/^\d{4}$/.test(year) || +year < 1 ||
        +day < 1 || +day > daysIn(+year, month)) { return null; }
    return { day: +day, month: month, year: +year, yearText: year, words: words };
  }

  // Each date written back in words beside its boxes as it is typed ("Read
  // as November 3, 1963"), as the server writes it from what was posted.
  function writeBack(fieldset) {
    var out = fieldset.querySelector(".date-read");
    if (!out) { return; }
    var d = dateOf(fieldset), text = "";
    if (d) {
      text = d.words.read.replace("{date}", d.words.format.replace("{day}", String(d.day))
        .replace("{month}", d.words.months[d.month - 1]).replace("{year}", String(d.year)));
    }
    if (out.textContent !== text) { out.textContent = text; }
  }

  function watchDates(root) {
    var fieldsets = root.querySelectorAll("fieldset[data-date-words]");
    Array.prototype.forEach.call(fieldsets, function (fieldset) {
      var update = function () { writeBack(fieldset); };
      fieldset.addEventListener("input", update);
      fieldset.addEventListener("change", update);
      update();
    });
  }

  // Regla 19.6's question matters only for a first entry on or before its
  // cut-off date: show it as soon as such a date is typed in the entry
  // date's three boxes. The server decides the same on its own without script.
  function entryDate(app) {
    var box = app.querySelector("#f-entry_date-day");
    var d = box ? dateOf(box.closest("fieldset")) : null;
    if (!d) { return null; }
    return d.yearText + "-" + ("0" + d.month).slice(-2) + "-" + ("0" + d.day).slice(-2);
  }

  function watchEntryDate(app) {
    var boxes = app.querySelectorAll("[id^='f-entry_date-']");
    var question = app.querySelector("#q-deferred_right_1960");
    if (!boxes.length || !question) { return; }
    var update = function () {
      var iso = entryDate(app);
      var answered = question.querySelector("input:checked:not([value=''])");
      if (iso || !answered) {
        question.hidden = !(answered || (iso && iso <= question.getAttribute("data-cutoff")));
      }
    };
    Array.prototype.forEach.call(boxes, function (input) {
      input.addEventListener("input", update);
      input.addEventListener("change", update);
    });
  }

  function init() {
    var app = document.getElementById("app");
    if (app) {
      rememberAnswer(app);
      watchDates(app);
      watchEntryDate(app);
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
