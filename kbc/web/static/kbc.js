// kbc's UI: draw the diagrams, copy a slice, open a module from the graph. No network.
(function () {
  "use strict";
  function links() {
    var data = document.getElementById("module-links");
    return data ? JSON.parse(data.textContent) : {};
  }
  function clickable(root) {
    var byName = links();
    root.querySelectorAll("g.node").forEach(function (node) {
      var label = (node.textContent || "").trim();
      var href = byName[label];
      if (!href) { return; }
      node.style.cursor = "pointer";
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "link");
      node.setAttribute("aria-label", label);
      function go() { window.location.href = href; }
      node.addEventListener("click", go);
      node.addEventListener("keydown", function (e) { if (e.key === "Enter") { go(); } });
    });
  }
  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral",
                                flowchart: { htmlLabels: false }, maxTextSize: 200000, maxEdges: 2000 });
    window.mermaid.run({ querySelector: "pre.mermaid" }).then(function () {
      document.querySelectorAll("pre.mermaid[data-links]").forEach(clickable);
      document.body.setAttribute("data-diagrams", "drawn");
    }).catch(function (error) {
      document.body.setAttribute("data-diagrams", "failed");
      console.error(error);
    });
  }
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
