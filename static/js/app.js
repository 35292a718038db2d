// Trialdesk: the little behaviour htmx does not cover. Loaded from 'self' (the CSP forbids
// inline script); every page works without it.
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  function typingInField(target) {
    if (!target || !target.closest) return false;
    return Boolean(target.closest("input, textarea, select, [contenteditable='true']"));
  }

  // Keyboard (DESIGN §6): "/" focuses the search; p / f / d pick a judgment on a trial page.
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || typingInField(event.target)) return;
    if (event.key === "/") {
      var search = document.getElementById("id_q");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
      return;
    }
    var judgments = { p: "pass", f: "fail", d: "defer" };
    var value = judgments[event.key];
    if (value) {
      var radio = document.querySelector(
        "#annotations input[name='judgment'][value='" + value + "']"
      );
      if (radio) {
        event.preventDefault();
        radio.checked = true;
        radio.focus();
      }
    }
  });

  // A session that expired answers an htmx request with the login page (login_required
  // redirects, the XHR follows). Go there as a page instead of swapping it into a card.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail && event.detail.xhr;
    var loginUrl = document.body.getAttribute("data-login-url");
    if (!xhr || !xhr.responseURL || !loginUrl) return;
    var landed = new URL(xhr.responseURL);
    if (landed.origin === window.location.origin && landed.pathname === loginUrl) {
      event.detail.shouldSwap = false;
      window.location.assign(landed.pathname + "?next=" + encodeURIComponent(window.location.pathname + window.location.search));
    }
  });

  // After the annotations card is swapped in, keep keyboard users where they were: move
  // focus to the card's status message (it is also announced, being role="status").
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "annotations") return;
    var card = document.getElementById("annotations");
    var status = card && card.querySelector("[role='status'], [role='alert'], .errorlist");
    if (status) {
      status.setAttribute("tabindex", "-1");
      status.focus();
    }
  });
})();
