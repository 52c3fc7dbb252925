// sdckit workbench: refresh the status of running jobs, nothing else (every page works without it).
"use strict";
(function () {
  function poll(element) {
    var url = element.getAttribute("data-poll");
    window.setTimeout(function () {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
        .then(function (text) {
          var holder = document.createElement("div");
          holder.innerHTML = text.trim();
          var fresh = holder.firstElementChild;
          if (!fresh) { return; }
          if (fresh.getAttribute("data-state") !== "running") {
            window.location.reload();
            return;
          }
          var focused = document.activeElement && element.contains(document.activeElement);
          element.replaceWith(fresh);
          if (focused) { var button = fresh.querySelector("button"); if (button) { button.focus(); } }
          poll(fresh);
        })
        .catch(function () { window.setTimeout(function () { poll(element); }, 2000); });
    }, 400);
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-poll]").forEach(poll);
    var invalid = document.querySelector("[aria-invalid=true]");
    if (invalid) { invalid.focus(); }
  });
})();
