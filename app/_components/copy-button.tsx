"use client";
/** A button that copies a text to the clipboard and says so for a moment (announced to screen readers). */
import { useState } from "react";

export function CopyButton({
  text,
  label = "Copy",
  className,
}: {
  text: string | (() => string);
  label?: string;
  className?: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className={`copy-button small ${className ?? ""}`}
      aria-label={state === "copied" ? `${label}: copied` : label}
      onClick={() => {
        const value = typeof text === "function" ? text() : text;
        navigator.clipboard.writeText(value).then(
          () => setState("copied"),
          () => setState("failed"),
        );
        setTimeout(() => setState("idle"), 2_000);
      }}
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : label}
    </button>
  );
}
