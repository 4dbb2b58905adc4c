// The failure timeline (issue 15): the SVG the API returns as `timeline_svg`, shown in #timeline-card.
// The SVG is made by diagnose (every text XML-escaped, no script); it is still parsed as SVG, not HTML,
// and only plain drawing elements and attributes are kept, so nothing in it can run or load anything.
"use strict";

(() => {
  const ELEMENTS = new Set(["svg", "g", "title", "desc", "rect", "circle", "line", "text", "tspan"]);
  const DROP_ATTRS = /^(on|href$|xlink:href$|style$|src$)/i;

  function clean(node) {
    for (const child of [...node.children]) {
      if (!ELEMENTS.has(child.localName) || child.namespaceURI !== "http://www.w3.org/2000/svg") {
        child.remove();
        continue;
      }
      for (const attr of [...child.attributes]) {
        if (DROP_ATTRS.test(attr.name)) child.removeAttribute(attr.name);
      }
      clean(child);
    }
  }

  function parse(text) {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = doc.documentElement;
    if (!root || root.localName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
    for (const attr of [...root.attributes]) {
      if (DROP_ATTRS.test(attr.name)) root.removeAttribute(attr.name);
    }
    clean(root);
    return document.importNode(root, true);
  }

  // Show the timeline, or hide the card when the diagnosis involves at most one rank (svg is null).
  function show(svgText) {
    const card = document.querySelector("#timeline-card");
    const box = document.querySelector("#timeline");
    if (!card || !box) return;
    const svg = typeof svgText === "string" && svgText ? parse(svgText) : null;
    box.replaceChildren(...(svg ? [svg] : []));
    card.hidden = !svg;
  }

  window.diagnoseTimeline = { show };
})();
