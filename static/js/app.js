// Trialdesk: the little behaviour htmx does not cover. Loaded from 'self' (the CSP forbids
// inline script); every page works without it.
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  // Phones: the menu and the explorer's filters fold behind their buttons. They are open in
  // the markup (without JavaScript everything shows) and open again on a wider screen.
  var phone = window.matchMedia("(max-width: 700px)");
  function fitToScreen() {
    var panels = document.querySelectorAll("details[data-phone-collapsed]");
    for (var i = 0; i < panels.length; i++) panels[i].open = !phone.matches;
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fitToScreen);
  } else {
    fitToScreen();
  }
  if (phone.addEventListener) phone.addEventListener("change", fitToScreen);

  // Typing is text entry: a radio button or a checkbox with focus still takes shortcuts
  // (pressing "p" focuses the pass radio, and "f" must still switch to fail).
  var NOT_TYPING = { button: 1, checkbox: 1, radio: 1, reset: 1, submit: 1, range: 1, color: 1, file: 1 };

  function typingInField(target) {
    if (!target || !target.closest) return false;
    var field = target.closest("input, textarea, select, [contenteditable='true']");
    if (!field) return false;
    if (field.tagName === "INPUT") return !NOT_TYPING[(field.getAttribute("type") || "text").toLowerCase()];
    return true;
  }

  function shortcutsDialog() {
    return document.getElementById("shortcuts");
  }

  function toggleShortcuts() {
    var dialog = shortcutsDialog();
    if (!dialog || typeof dialog.showModal !== "function") return false;
    if (dialog.open) {
      dialog.close();
    } else {
      dialog.showModal();
    }
    return true;
  }

  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest && event.target.closest("[data-shortcuts-toggle]");
    if (button) {
      event.preventDefault();
      toggleShortcuts();
    }
  });

  // "Show raw text": the text as stored (escape codes, markdown source) instead of as
  // rendered, for everything inside the button's [data-raw-scope].
  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest && event.target.closest("[data-raw-toggle]");
    if (!button) return;
    var scope = button.closest("[data-raw-scope]");
    if (!scope) return;
    var raw = scope.classList.toggle("show-raw");
    button.setAttribute("aria-pressed", raw ? "true" : "false");
    button.textContent = raw ? "Show rendered text" : "Show raw text";
  });

  var JUDGMENTS = { p: "pass", f: "fail", d: "defer" };

  // Keyboard (DESIGN §6): j / k next / previous trial (links marked data-hotkey), p / f / d
  // pick a judgment, "/" focuses the search, "?" toggles the help (Esc closes it: <dialog>).
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    if (event.key === "?") {
      if (!typingInField(event.target) && toggleShortcuts()) event.preventDefault();
      return;
    }
    var dialog = shortcutsDialog();
    if ((dialog && dialog.open) || typingInField(event.target)) return;

    if (event.key === "/") {
      var search = document.getElementById("id_q");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
      return;
    }
    if (event.key === "j" || event.key === "k") {
      var link = document.querySelector("a[data-hotkey='" + event.key + "'][href]");
      if (link) {
        event.preventDefault();
        link.click();
      }
      return;
    }
    var value = JUDGMENTS[event.key];
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
