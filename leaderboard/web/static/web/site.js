// Honest Leaderboard: a little plain JavaScript. Every page works without it.
(function () {
  "use strict";

  // Status pages: poll a small JSON view until the work is final, then reload to show the result.
  function pollStatus(box) {
    var url = box.getAttribute("data-status-url");
    var text = document.getElementById("status-text");
    var tick = function () {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (!data) { return setTimeout(tick, 4000); }
          if (text && data.status_display) { text.textContent = data.status_display; }
          if (text && data.total !== undefined) {
            text.textContent = data.done + " of " + data.total + " submissions re-scored (" + data.state + ")";
            var bar = document.getElementById("progress");
            if (bar) { bar.value = data.done; }
          }
          if (data.final) { window.location.reload(); } else { setTimeout(tick, 1500); }
        })
        .catch(function () { setTimeout(tick, 4000); });
    };
    setTimeout(tick, 1000);
  }

  // Verdict explanations (CSS tooltips on hover and focus): Escape hides the one that is open (WCAG 1.4.13).
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    var open = document.querySelectorAll("td.verdict-cell .tip");
    for (var i = 0; i < open.length; i++) { open[i].classList.add("dismissed"); }
  });
  document.addEventListener("focusin", function (event) {
    if (event.target.classList && event.target.classList.contains("verdict-tag")) {
      var tips = document.querySelectorAll("td.verdict-cell .tip.dismissed");
      for (var i = 0; i < tips.length; i++) { tips[i].classList.remove("dismissed"); }
    }
  });

  // Copy buttons (the token): shown only when the clipboard can be used.
  function setupCopy(button) {
    if (!navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.querySelector(button.getAttribute("data-copy"));
      var status = button.parentNode.querySelector(".copy-status");
      navigator.clipboard.writeText(source.value || source.textContent).then(function () {
        if (status) { status.textContent = "Copied."; }
      }, function () {
        source.select && source.select();
        if (status) { status.textContent = "Press Ctrl+C to copy."; }
      });
    });
  }

  // Upload size check before the file is sent (the server checks again). The forms are `novalidate`
  // (the server's messages are clearer than the browser's), so setCustomValidity alone would not stop the
  // upload: the form's submit handler refuses to send while any file is over the limit.
  function sizeMessage(input) {
    var max = parseInt(input.getAttribute("data-max-bytes"), 10);
    var big = Array.prototype.filter.call(input.files || [], function (f) { return f.size > max; });
    if (!big.length) { return ""; }
    var mib = function (n) { return n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : (n / 1024).toFixed(1) + " KiB"; };
    return big[0].name + ": the file is " + mib(big[0].size) + " (" + big[0].size.toLocaleString("en") +
      " bytes); the limit is " + mib(max) + " (" + max.toLocaleString("en") + " bytes). Nothing was sent.";
  }

  function showSizeMessage(input) {
    var msg = sizeMessage(input);
    input.setCustomValidity(msg);
    var note = input.parentNode.querySelector(".size-error");
    if (!note) { note = document.createElement("p"); note.className = "error size-error"; note.setAttribute("role", "alert"); input.parentNode.appendChild(note); }
    note.textContent = msg;
    return msg;
  }

  function setupSizeCheck(input) {
    input.addEventListener("change", function () { showSizeMessage(input); });
    var form = input.form;
    if (form && !form.getAttribute("data-size-checked")) {
      form.setAttribute("data-size-checked", "1");
      form.addEventListener("submit", function (event) {
        var inputs = form.querySelectorAll("input[type=file][data-max-bytes]");
        for (var i = 0; i < inputs.length; i++) {
          if (showSizeMessage(inputs[i])) {
            event.preventDefault();
            inputs[i].focus();
            return;
          }
        }
      });
    }
  }

  // Long work (an upload checked and, in the embedded default, scored inside the request; a re-score): once
  // a form with data-busy is really sent, its buttons are disabled (it cannot be sent twice) and a live
  // note with a spinner says what is happening. Registered after the size check, which may cancel.
  function setupBusy(form) {
    form.addEventListener("submit", function (event) {
      if (event.defaultPrevented) { return; }
      var buttons = form.querySelectorAll("button[type=submit], input[type=submit]");
      if (form.getAttribute("aria-busy") === "true") { event.preventDefault(); return; }
      form.setAttribute("aria-busy", "true");
      // disabled after this event: a button disabled now would not be sent with the form
      setTimeout(function () { buttons.forEach(function (b) { b.disabled = true; }); }, 0);
      var note = form.querySelector(".busy-note");
      if (!note) {
        note = document.createElement("p");
        note.className = "busy-note";
        note.setAttribute("role", "status");
        form.appendChild(note);
      }
      note.innerHTML = '<span class="spinner" aria-hidden="true"></span> ';
      note.appendChild(document.createTextNode(form.getAttribute("data-busy")));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".status-box[data-status-url]").forEach(function (box) {
      if (box.getAttribute("data-final") !== "1") { pollStatus(box); }
    });
    document.querySelectorAll("button.copy[data-copy]").forEach(setupCopy);
    document.querySelectorAll("input[type=file][data-max-bytes]").forEach(setupSizeCheck);
    document.querySelectorAll("form[data-busy]").forEach(setupBusy);
  });
})();
