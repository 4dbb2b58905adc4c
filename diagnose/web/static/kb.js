// Encyclopedia pages: a Copy button beside each code block.
"use strict";

for (const block of document.querySelectorAll(".kb-section pre")) {
  const wrapper = document.createElement("div");
  wrapper.className = "codeblock";
  block.replaceWith(wrapper);
  const button = document.createElement("button");
  button.type = "button";
  button.className = "button secondary small copy";
  button.textContent = "Copy";
  button.setAttribute("aria-label", "Copy this code");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(block.innerText);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
  wrapper.append(block, button);
}
