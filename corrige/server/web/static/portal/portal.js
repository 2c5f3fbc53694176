// Progressive enhancement for the portal's forms. A form with `data-api` posts its fields as
// JSON to that API path, with the page's CSRF token in the X-CSRF-Token header, and shows the
// HTML the API returns in the element named by `data-result`. Without JavaScript the same form
// posts normally and the server answers with a whole page.
(function () {
  "use strict";

  function message(text) {
    var p = document.createElement("p");
    p.className = "alert";
    p.setAttribute("role", "alert");
    p.textContent = text;
    return p;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) {
      return;
    }
    event.preventDefault();
    var out = document.getElementById(form.dataset.result);
    var button = form.querySelector('button[type="submit"]');
    var labels = document.body.dataset;
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
          var error = data && data.error ? data.error : { code: "", message: "" };
          var text = error.code === "csrf_failed" ? labels.errorCsrf : error.message || labels.errorGeneric;
          out.replaceChildren(message(text));
        });
      })
      .catch(function () {
        out.replaceChildren(message(labels.errorGeneric));
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
