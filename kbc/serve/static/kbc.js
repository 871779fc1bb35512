// kbc's UI: copy a slice, bring the highlighted lines into view. No network.
(function () {
  "use strict";
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      var status = button.parentNode.querySelector(".copied");
      var text = target ? target.textContent : "";
      function done(message) { if (status) { status.textContent = message; } }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done("Copied."); },
                                                 function () { done("Copy failed: select the text."); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        done(document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C.");
      }
    });
  });
  var hl = document.querySelector("tr.hl");
  if (hl && !window.location.hash) { hl.scrollIntoView({ block: "center" }); }
})();
