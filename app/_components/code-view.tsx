"use client";
/**
 * Program source with light syntax highlighting (keywords, strings, numbers, comments). A long program
 * (programs may be up to 1 MiB) shows its first lines, with a button for the rest, so a run card stays
 * quick to render; beyond HIGHLIGHT_MAX characters the text is shown plain.
 */
import { useState } from "react";

const TOKEN =
  /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`)|\b(\d+(?:\.\d+)?)\b|\b(const|let|var|await|async|return|function|if|else|for|of|in|while|try|catch|throw|new|true|false|null|undefined|typeof|interface|type)\b/g;

/** Lines shown before "Show all", and the most characters of them. */
const PREVIEW_LINES = 200;
const PREVIEW_CHARS = 20_000;
/** Longer text is shown without highlighting (one span per token would be hundreds of thousands of nodes). */
const HIGHLIGHT_MAX = 200_000;

/** The first PREVIEW_LINES lines of `code`, at most PREVIEW_CHARS characters. */
function preview(code: string): string {
  let end = -1;
  for (let line = 0; line < PREVIEW_LINES; line++) {
    end = code.indexOf("\n", end + 1);
    if (end === -1) return code.length > PREVIEW_CHARS ? code.slice(0, PREVIEW_CHARS) : code;
  }
  return code.slice(0, Math.min(end, PREVIEW_CHARS));
}

function highlighted(code: string): React.ReactNode[] {
  if (code.length > HIGHLIGHT_MAX) return [code];
  const parts: React.ReactNode[] = [];
  let last = 0;
  let key = 0;
  for (const m of code.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) parts.push(code.slice(last, at));
    const cls = m[1] ? "tok-com" : m[2] ? "tok-str" : m[3] ? "tok-num" : "tok-kw";
    parts.push(
      <span key={key++} className={cls}>
        {m[0]}
      </span>,
    );
    last = at + m[0].length;
  }
  parts.push(code.slice(last));
  return parts;
}

export function CodeView({ code }: { code: string }) {
  const [all, setAll] = useState(false);
  const shown = all ? code : preview(code);
  const cut = shown.length < code.length;
  const lines = cut ? code.split("\n").length : 0;
  return (
    <>
      <pre data-testid="run-code">
        <code>{highlighted(shown)}</code>
      </pre>
      {cut && (
        <button type="button" className="small" onClick={() => setAll(true)} data-testid="run-code-all">
          Show all {lines.toLocaleString()} lines ({Math.round(code.length / 1024).toLocaleString()} KB)
        </button>
      )}
    </>
  );
}
