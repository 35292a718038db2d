// Trialdesk: trajectory steps. Deep links (#step-N open the trajectory tab and scroll to the
// step) and step comments (the one comment form moves into the step commented on; a text
// selection inside a step's part fills its range). Loaded from 'self' (CSP); without it
// the links reload the page and the form names its step by hand.
(function () {
  "use strict";

  var STEP_HASH = /^#step-(\d+)$/;

  function stepFromHash() {
    var match = STEP_HASH.exec(window.location.hash);
    return match ? match[1] : null;
  }

  function showStep(number) {
    var step = document.getElementById("step-" + number);
    if (!step) return false;
    var previous = document.querySelectorAll(".step-target");
    for (var i = 0; i < previous.length; i++) previous[i].classList.remove("step-target");
    step.classList.add("step-target");
    step.scrollIntoView({ block: "start" });
    return true;
  }

  // #step-N on a page whose open tab is not the trajectory, or whose trajectory shows another
  // chunk of steps (review.pages.steps): open the trajectory at that step, keeping the hash.
  function followStepHash() {
    var number = stepFromHash();
    if (!number || showStep(number)) return;
    var tab = document.querySelector("a[data-tab='trajectory']");
    if (!tab) return;
    var url = new URL(tab.href, window.location.href);
    if (tab.getAttribute("aria-current") === "page") {
      // The trajectory is open: ask for the chunk holding the step, once.
      var here = new URL(window.location.href);
      if (here.searchParams.get("at") === number) return;
      url = here;
    }
    url.searchParams.set("at", number);
    url.hash = "step-" + number;
    window.location.assign(url.toString());
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", followStepHash);
  } else {
    followStepHash();
  }
  window.addEventListener("hashchange", followStepHash);

  // --- the comment form ----------------------------------------------------------------------
  function commentForm() {
    return document.querySelector("[data-step-comment-form]");
  }

  function field(form, name) {
    return form.querySelector("[name='" + name + "']");
  }

  function setField(form, name, value) {
    var input = field(form, name);
    if (input) input.value = value === null || value === undefined ? "" : String(value);
  }

  // Put the form under the step and aim it at a part (an element carrying data-part and
  // data-part-index), with a range or without one; `supersedes` names the comment corrected.
  function aimForm(step, part, start, quote, supersedes) {
    var section = commentForm();
    if (!section) return null;
    if (section.parentNode !== step) step.appendChild(section);
    setField(section, "step", step.getAttribute("data-step"));
    setField(section, "supersedes", supersedes || "");
    if (part) {
      setField(section, "part", part.getAttribute("data-part"));
      setField(section, "part_index", part.getAttribute("data-part-index"));
    }
    var hint = section.querySelector("[data-comment-selection]");
    if (quote) {
      setField(section, "start", start);
      setField(section, "end", start + quote.length);
      setField(section, "quote", quote);
      var shown = "\u201c" + (quote.length > 200 ? quote.slice(0, 199) + "\u2026" : quote) + "\u201d";
      if (hint) hint.textContent = supersedes ? "Correcting your comment on " + shown + "." : "On the selected text: " + shown;
    } else if (supersedes) {
      setField(section, "start", "");
      setField(section, "end", "");
      setField(section, "quote", "");
      if (hint) hint.textContent = "Correcting your comment.";
    } else {
      setField(section, "start", "");
      setField(section, "end", "");
      setField(section, "quote", "");
      if (hint) hint.textContent = "On the whole part; select text inside it to comment on a range.";
    }
    return section;
  }

  document.addEventListener("click", function (event) {
    var link = event.target && event.target.closest && event.target.closest("[data-comment-step]");
    if (!link || !commentForm()) return;
    var step = link.closest("li[data-step]");
    if (!step) return;
    event.preventDefault();
    var section = aimForm(step, step.querySelector(".part[data-part]"), 0, "");
    var text = section && field(section, "text");
    if (text) text.focus();
  });

  // "Correct" on one of the reviewer's comments: the form aimed where it is, superseding it.
  document.addEventListener("click", function (event) {
    var link = event.target && event.target.closest && event.target.closest("[data-correct]");
    if (!link || !commentForm()) return;
    var step = link.closest("li[data-step]");
    if (!step) return;
    event.preventDefault();
    var start = parseInt(link.getAttribute("data-start"), 10);
    var quote = link.getAttribute("data-quote") || "";
    var section = aimForm(step, link, isNaN(start) ? 0 : start, quote, link.getAttribute("data-correct"));
    var text = section && field(section, "text");
    if (text) text.focus();
  });

  // The text of a part as the reviewer sees it: the stored text, or its rendering.
  function textOf(part) {
    return part.querySelector("[data-part-text]") || part.querySelector(".text-rendered") || part;
  }

  function aimAtSelection() {
    var selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount || !commentForm()) return;
    var range = selection.getRangeAt(0);
    var start = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentNode;
    var end = range.endContainer.nodeType === 1 ? range.endContainer : range.endContainer.parentNode;
    var part = start.closest(".part[data-part]");
    if (!part || end.closest(".part[data-part]") !== part) return;
    var container = textOf(part);
    if (!container.contains(range.startContainer)) return;
    var quote = range.toString();
    if (!quote.trim()) return;
    // Characters from the start of the part's text to the selection: the server checks
    // them against the stored text and moves the range to the quote if they differ.
    var before = document.createRange();
    before.setStart(container, 0);
    before.setEnd(range.startContainer, range.startOffset);
    aimForm(part.closest("li[data-step]"), part, before.toString().length, quote);
  }

  document.addEventListener("mouseup", function (event) {
    if (event.target && event.target.closest && event.target.closest("[data-step-comment-form]")) return;
    aimAtSelection();
  });
  document.addEventListener("keyup", function (event) {
    if (event.shiftKey) aimAtSelection();
  });

  // After a comment is added with htmx the trajectory tab comes back whole: back to the step.
  var commentedStep = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.target && event.target.closest && event.target.closest("[data-step-comment-form] form");
    if (form) commentedStep = (field(form, "step") || {}).value || null;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "tabs") return;
    var number = commentedStep || stepFromHash();
    commentedStep = null;
    // A refused comment comes back with its reasons in the form: show them there.
    var refused = document.querySelector("#step-comment .form-errors, #step-comment .errorlist");
    if (refused) {
      refused.closest("#step-comment").scrollIntoView({ block: "center" });
      return;
    }
    if (number) showStep(number);
  });
})();
