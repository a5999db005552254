// Typeset the math that pymdownx.arithmatex (generic mode) wrapped in .arithmatex elements,
// with the KaTeX copy vendored in assets/katex (no CDN: the site works offline). A formula
// KaTeX cannot parse is shown in red as a .katex-error element (the browser check fails on it).
document$.subscribe(({ body }) => {
  body.querySelectorAll(".arithmatex").forEach((element) => {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  });
});
