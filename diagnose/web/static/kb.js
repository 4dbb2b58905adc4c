// Encyclopedia pages: a Copy button on each code block.
"use strict";

for (const block of document.querySelectorAll(".kb-section pre")) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "button secondary small copy";
  button.textContent = "Copy";
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(block.innerText);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
  block.classList.add("has-copy");
  block.append(button);
}
