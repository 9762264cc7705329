// CANOE review app: small progressive enhancements; every page works without this file.
"use strict";
(function () {
  // A sent form cannot be sent twice by an impatient click (the Task id would make it
  // harmless anyway): disable its button and say so.
  document.querySelectorAll("form[method='post']").forEach(function (form) {
    form.addEventListener("submit", function () {
      form.querySelectorAll("button[type='submit']").forEach(function (b) {
        b.disabled = true;
        b.setAttribute("aria-busy", "true");
      });
    });
  });
  // Graph and list point at each other: focusing or hovering an argument lights its node.
  function light(id, on) {
    var node = document.getElementById("node-" + id);
    if (node) { node.classList.toggle("highlight", on); }
    var card = document.getElementById("arg-" + id);
    if (card) { card.classList.toggle("highlight", on); }
  }
  document.querySelectorAll("[data-arg]").forEach(function (el) {
    var id = el.getAttribute("data-arg");
    ["mouseenter", "focusin"].forEach(function (ev) {
      el.addEventListener(ev, function () { light(id, true); });
    });
    ["mouseleave", "focusout"].forEach(function (ev) {
      el.addEventListener(ev, function () { light(id, false); });
    });
  });
  // After a change, move focus to the summary of what changed, for keyboard and screen readers.
  var changes = document.getElementById("changes");
  if (changes && window.location.hash === "#changes") { changes.focus(); }
})();
