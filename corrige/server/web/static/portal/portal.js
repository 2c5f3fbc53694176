// Progressive enhancement for the portal's forms. A form with `data-api` posts its fields as
// JSON to that API path, with the page's CSRF token in the X-CSRF-Token header, and shows the
// HTML the API returns in the element named by `data-result`; an error is shown as the page's
// message for its code (the <template id="error-messages">), never the API's own wording.
// Without JavaScript the same form posts normally and the server answers with a whole page.
// A required field left empty says so in the page's language (its `data-missing`), and
// <time data-local> elements show their time in the learner's time zone (the server writes UTC).
(function () {
  "use strict";

  function message(text, code) {
    var p = document.createElement("p");
    p.className = "alert";
    p.setAttribute("role", "alert");
    if (code) {
      p.dataset.code = code;
    }
    p.textContent = text;
    return p;
  }

  function errorText(code) {
    var messages = document.getElementById("error-messages");
    var found = null;
    if (messages && /^[a-z_]+$/.test(code)) {
      found = messages.content.querySelector('[data-codes~="' + code + '"]');
    }
    return found ? found.textContent : document.body.dataset.errorGeneric;
  }

  function showLocalTimes() {
    var lang = document.documentElement.lang || undefined;
    var format = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });
    document.querySelectorAll("time[data-local][datetime]").forEach(function (element) {
      var when = new Date(element.getAttribute("datetime"));
      if (!isNaN(when.getTime())) {
        element.textContent = format.format(when);
      }
    });
  }

  document.addEventListener(
    "invalid",
    function (event) {
      var field = event.target;
      if (field.dataset && field.dataset.missing && field.validity.valueMissing) {
        field.setCustomValidity(field.dataset.missing);
      }
    },
    true
  );
  document.addEventListener("input", function (event) {
    if (event.target.dataset && event.target.dataset.missing) {
      event.target.setCustomValidity("");
    }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", showLocalTimes);
  } else {
    showLocalTimes();
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) {
      return;
    }
    event.preventDefault();
    var out = document.getElementById(form.dataset.result);
    var button = form.querySelector('button[type="submit"]');
    var body = {};
    var token = "";
    new FormData(form).forEach(function (value, name) {
      if (name === "csrf_token") {
        token = value;
      } else {
        body[name] = value;
      }
    });
    button.disabled = true;
    form.setAttribute("aria-busy", "true");
    fetch(form.dataset.api, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify(body),
    })
      .then(function (response) {
        return response.json().then(function (data) {
          if (response.ok) {
            out.innerHTML = data.html;
            return;
          }
          var code = data && data.error ? String(data.error.code) : "";
          out.replaceChildren(message(errorText(code), code));
        });
      })
      .catch(function () {
        out.replaceChildren(message(document.body.dataset.errorGeneric));
      })
      .finally(function () {
        button.disabled = false;
        form.removeAttribute("aria-busy");
        if (form.hasAttribute("data-focus-result")) {
          out.focus();
        }
      });
  });
})();
