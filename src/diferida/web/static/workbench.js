/* The workbench's one script; every page works the same without it.
   - The warning before the session ends (WCAG 2.2.1): a modal alertdialog
     opens `data-session-warn` seconds before the end (at least 20 s to act),
     with "Keep working", which renews the session (POST /analista/sesion)
     and needs one key or click (before it opens, and before it says the
     session ended, it asks, by a GET that renews nothing, whether another
     tab kept the session going); Escape does the same. When the session
     cannot be extended (its absolute lifetime), it says so. Whatever is
     posted after the end is kept by the server and shown again after
     signing in (docs/workbench.md).
   - "Ver la respuesta" lands on #respuesta (the form's action carries it):
     focus goes to the answer, or to the list of errors.
   - Each date of the application is written back in words beside its
     boxes as it is typed, as the server writes it (the date component's
     words in its fieldset's data-date-words; the calculator's web.js does
     the same). */
(function () {
  "use strict";

  var body = document.body;
  var dialog = document.getElementById("session-warning");

  function plural(forms, n) {
    return (n === 1 ? forms[0] : forms[1]).replace("{n}", String(n));
  }

  function spoken(seconds) {
    var d = dialog.dataset;
    if (seconds >= 90) { return plural(JSON.parse(d.minutes), Math.round(seconds / 60)); }
    return plural(JSON.parse(d.seconds), Math.max(0, Math.round(seconds)));
  }

  function clock(seconds) {
    var s = Math.max(0, Math.ceil(seconds));
    return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
  }

  function setUpWarning() {
    if (!dialog || !body.dataset.sessionLeft || typeof dialog.showModal !== "function") {
      return;
    }
    var text = document.getElementById("session-warning-text");
    var clockNode = document.getElementById("session-clock");
    var extend = document.getElementById("session-extend");
    var close = document.getElementById("session-close");
    var form = document.getElementById("session-extend-form");
    var warnBefore = Number(body.dataset.sessionWarn) || 120;
    var ends = 0;
    var extendable = true;
    var warnTimer = null;
    var tick = null;
    var before = null;

    function schedule(left, canExtend) {
      ends = Date.now() + left * 1000;
      extendable = canExtend;
      clearTimeout(warnTimer);
      warnTimer = setTimeout(ask, Math.max(0, (left - warnBefore) * 1000));
    }

    // Another tab may have kept the session going: ask the server (GET, which
    // renews nothing) before warning, and before saying it ended.
    function ask() {
      fetch(form.getAttribute("action"), {
        headers: { "Accept": "application/json" }, credentials: "same-origin"
      }).then(function (response) {
        return response.json().then(function (data) {
          return response.ok ? data : { seconds: 0, extendable: false };
        });
      }).then(function (data) {
        dialog.dataset.asked = String((Number(dialog.dataset.asked) || 0) + 1);
        if (data.seconds > warnBefore + 5) {
          shut(true);
          schedule(data.seconds, data.extendable);
        } else {
          ends = Date.now() + data.seconds * 1000;
          extendable = data.extendable;
          open();
        }
      }).catch(open);  // no answer: the page's own count
    }

    function remaining() { return (ends - Date.now()) / 1000; }

    function show(message, canAct) {
      text.textContent = message;
      extend.hidden = !canAct;
      close.hidden = canAct;
    }

    function open() {
      if (!dialog.open) {
        before = document.activeElement;
        var left = remaining();
        if (left <= 0) {  // already over (the computer slept, say)
          show(dialog.dataset.endedText, false);
        } else {
          show(dialog.dataset[extendable ? "leftText" : "finalText"].replace(
            "{time}", spoken(left)), extendable);
        }
        clockNode.textContent = clock(left);
        dialog.showModal();
        (extend.hidden ? close : extend).focus();
        if (left <= 0) { return; }
      }
      clearInterval(tick);
      tick = setInterval(function () {
        var left = remaining();
        clockNode.textContent = clock(left);
        if (left <= 0) {
          clearInterval(tick);
          fetch(form.getAttribute("action"), {
            headers: { "Accept": "application/json" }, credentials: "same-origin"
          }).then(function (response) {
            return response.ok ? response.json() : { seconds: 0 };
          }).catch(function () { return { seconds: 0 }; }).then(function (data) {
            if (data.seconds > 0) {  // kept going elsewhere
              shut();
              schedule(data.seconds, data.extendable);
            } else {
              show(dialog.dataset.endedText, false);
              close.focus();
            }
          });
        }
      }, 1000);
    }

    function shut(quietly) {
      clearInterval(tick);
      if (dialog.open) {
        dialog.close();
        if (!quietly && before && typeof before.focus === "function") { before.focus(); }
      }
    }

    function renew() {
      extend.disabled = true;
      fetch(form.getAttribute("action"), {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { "Accept": "application/json" },
        credentials: "same-origin"
      }).then(function (response) {
        return response.json().then(function (data) { return [response.ok, data]; });
      }).then(function (answer) {
        extend.disabled = false;
        if (!answer[0]) { throw new Error("ended"); }
        schedule(answer[1].seconds, answer[1].extendable);
        shut();
      }).catch(function () {
        extend.disabled = false;
        clearInterval(tick);
        show(dialog.dataset.failedText, false);
        close.focus();
      });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      renew();
    });
    close.addEventListener("click", function () { shut(false); });
    // Escape: the same as the button in view (keep working, or close)
    dialog.addEventListener("cancel", function (event) {
      event.preventDefault();
      if (!extend.hidden) { renew(); } else { shut(); }
    });
    schedule(Number(body.dataset.sessionLeft), body.dataset.sessionExtendable === "yes");
  }

  // "Ver la respuesta": the page comes back at #respuesta; focus follows
  function landOnAnswer() {
    if (window.location.hash !== "#respuesta") { return; }
    var target = document.getElementById("error-summary") || document.getElementById("answer");
    if (target) {
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "start" });
    }
  }

  // The date a date's three boxes say, as the server reads it (web/lenient.py),
  // written back in words beside them ("Read as November 3, 1963").
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

  function writeBack(fieldset, words) {
    var out = fieldset.querySelector(".date-read");
    var boxes = fieldset.querySelectorAll(".date-box input");
    if (!out || boxes.length !== 3) { return; }
    var day = boxes[0].value.trim(), month = monthOf(boxes[1].value, words);
    var year = boxes[2].value.trim(), text = "";
    if (/^\d{1,2}$/.test(day) && month && /^\d{4}$/.test(year) && +year >= 1 &&
        +day >= 1 && +day <= daysIn(+year, month)) {
      text = words.read.replace("{date}", words.format.replace("{day}", String(+day))
        .replace("{month}", words.months[month - 1]).replace("{year}", String(+year)));
    }
    if (out.textContent !== text) { out.textContent = text; }
  }

  function watchDates() {
    var fieldsets = document.querySelectorAll("fieldset[data-date-words]");
    Array.prototype.forEach.call(fieldsets, function (fieldset) {
      var words;
      try { words = JSON.parse(fieldset.getAttribute("data-date-words")); } catch (e) { return; }
      var update = function () { writeBack(fieldset, words); };
      fieldset.addEventListener("input", update);
      fieldset.addEventListener("change", update);
      update();
    });
  }

  setUpWarning();
  watchDates();
  // after the browser's own move to #respuesta (which leaves focus nowhere)
  if (document.readyState === "complete") { landOnAnswer(); }
  else { window.addEventListener("load", landOnAnswer); }
}());
