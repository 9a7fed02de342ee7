// Draws the guide's ```mermaid blocks with the vendored mermaid.min.js, in the browser and
// without a network. mdBook writes such a block as <pre><code class="language-mermaid">;
// each becomes the <pre class="mermaid"> that Mermaid draws, from the block's text (which the
// HTML escaped, and textContent gives back as written). Without scripts the reader sees the
// diagram's source.
(function () {
  for (const code of document.querySelectorAll("code.language-mermaid")) {
    const diagram = document.createElement("pre");
    diagram.className = "mermaid";
    diagram.textContent = code.textContent;
    code.parentElement.replaceWith(diagram);
  }
  const html = document.documentElement.classList;
  const dark = ["coal", "navy", "ayu"].some((theme) => html.contains(theme));
  mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "default" });
  mermaid.run({ querySelector: "pre.mermaid" });
})();
