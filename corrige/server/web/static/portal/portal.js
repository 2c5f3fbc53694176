// Progressive enhancement for the portal's forms. A form with `data-api` posts its fields as
// JSON to that API path, with the page's CSRF token in the X-CSRF-Token header, and shows the
// HTML the API returns in the element named by `data-result`; an error is shown as the page's
// message for its code (the <template id="error-messages">), never the API's own wording.
// Without JavaScript the same form posts normally and the server answers with a whole page.
// A required field left empty says so in the page's language (its `data-missing`), and
// <time data-local> elements show their time in the learner's time zone (the server writes UTC).
// A text's correction (.text-result) gets "accept" per edit and "accept all": the corrections are
// applied in place in the text box, by the edits' offsets (UTF-16 units, as the server gives them),
// then the text is sent again and its new correction replaces the panel, with a line saying so
// (sentences the server answered lately come back from its answer cache, without the model);
// without JavaScript "accept all" is a form post that puts the corrected text in the box.
(function () {
  "use strict";

  document.documentElement.classList.add("js"); // shows the controls that need the script

  var applied = new WeakMap(); // .text-result → the text the box should hold (its edits accepted so far)
  var sent = 0; // requests sent from a form: only the latest one's answer is shown

  // send the text box's form again once an edit is in it: its new correction replaces `result`
  function recheck(result, note) {
    var field = document.getElementById(result.dataset.field);
    var form = field ? field.form : null;
    if (form && form.dataset.api) {
      form.dataset.note = note || "";
      form.requestSubmit();
    }
  }

  function acceptOne(result, card) {
    var field = document.getElementById(result.dataset.field);
    var status = result.querySelector(".accept-status");
    if (!field || card.classList.contains("accepted")) {
      return true;
    }
    var expected = applied.has(result) ? applied.get(result) : result.dataset.source;
    if (field.value !== expected) {
      // the learner changed the text since it was corrected: its offsets no longer hold
      if (status) {
        status.textContent = result.dataset.stale;
      }
      return false;
    }
    var start = Number(card.dataset.start);
    var shift = 0;
    result.querySelectorAll(".edit-card.accepted").forEach(function (done) {
      if (Number(done.dataset.start) < start) {
        shift += done.dataset.replacement.length - done.dataset.original.length;
      }
    });
    var at = start + shift;
    var original = card.dataset.original;
    if (field.value.slice(at, at + original.length) !== original) {
      if (status) {
        status.textContent = result.dataset.stale;
      }
      return false;
    }
    field.value = field.value.slice(0, at) + card.dataset.replacement + field.value.slice(at + original.length);
    applied.set(result, field.value);
    card.classList.add("accepted");
    var button = card.querySelector("[data-accept]");
    if (button) {
      button.disabled = true;
      button.textContent = result.dataset.accepted;
    }
    var mark = result.querySelector('.edit-mark[data-edit="' + card.dataset.edit + '"]');
    if (mark) {
      mark.classList.add("accepted");
    }
    return true;
  }

  function acceptAll(result) {
    var cards = result.querySelectorAll(".edit-card:not(.accepted)");
    for (var i = 0; i < cards.length; i++) {
      if (!acceptOne(result, cards[i])) {
        return;
      }
    }
    var status = result.querySelector(".accept-status");
    if (status) {
      status.textContent = result.dataset.done;
    }
    recheck(result, result.dataset.done);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-accept]") : null;
    var result = button ? button.closest(".text-result") : null;
    var card = button ? button.closest(".edit-card") : null;
    if (result && card && !card.classList.contains("accepted") && acceptOne(result, card)) {
      recheck(result, result.dataset.rechecked);
    }
  });

  // Ctrl+Enter (Cmd+Enter) in a text box sends its form, as Enter does in a one-line field
  document.addEventListener("keydown", function (event) {
    var field = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && field instanceof HTMLTextAreaElement && field.form) {
      event.preventDefault();
      field.form.requestSubmit();
    }
  });

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
    if (form instanceof HTMLFormElement && form.hasAttribute("data-accept-all") && form.closest(".text-result")) {
      event.preventDefault(); // applied in place; without the script the form post does it
      acceptAll(form.closest(".text-result"));
      return;
    }
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) {
      return;
    }
    event.preventDefault();
    var out = document.getElementById(form.dataset.result);
    var button = form.querySelector('button[type="submit"]');
    var note = form.dataset.note;
    delete form.dataset.note;
    var number = ++sent;
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
          if (number !== sent) {
            return; // a later request's answer replaces this one
          }
          if (response.ok) {
            out.innerHTML = data.html;
            if (note) {
              var said = document.createElement("p");
              said.className = "recheck-status";
              said.setAttribute("role", "status");
              said.dataset.testid = "recheck-status";
              said.textContent = note;
              out.prepend(said);
            }
            return;
          }
          var code = data && data.error ? String(data.error.code) : "";
          out.replaceChildren(message(errorText(code), code));
        });
      })
      .catch(function () {
        if (number === sent) {
          out.replaceChildren(message(document.body.dataset.errorGeneric));
        }
      })
      .finally(function () {
        if (number !== sent) {
          return;
        }
        button.disabled = false;
        form.removeAttribute("aria-busy");
        if (form.hasAttribute("data-focus-result")) {
          out.focus();
        }
      });
  });
})();
