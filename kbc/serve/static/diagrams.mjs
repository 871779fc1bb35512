// Draw the page's Mermaid blocks as SVG, then make the module graph's nodes links.
// Mermaid's ES module build loads only the parts a flowchart needs (kbc draws no other kind).
import mermaid from "./mermaid/mermaid.esm.min.mjs";

function clickable(root) {
  const data = document.getElementById("module-links");
  const byName = data ? JSON.parse(data.textContent) : {};
  root.querySelectorAll("g.node").forEach((node) => {
    const label = (node.textContent || "").trim();
    const href = byName[label];
    if (!href) { return; }
    node.style.cursor = "pointer";
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "link");
    node.setAttribute("aria-label", label);
    const go = () => { window.location.href = href; };
    node.addEventListener("click", go);
    node.addEventListener("keydown", (event) => { if (event.key === "Enter") { go(); } });
  });
}

mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral",
                     flowchart: { htmlLabels: false }, maxTextSize: 200000, maxEdges: 2000 });
mermaid.run({ querySelector: "pre.mermaid" }).then(() => {
  document.querySelectorAll("pre.mermaid[data-links]").forEach(clickable);
  document.body.setAttribute("data-diagrams", "drawn");
}).catch((error) => {
  document.body.setAttribute("data-diagrams", "failed");
  console.error(error);
});
