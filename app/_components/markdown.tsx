"use client";
/**
 * A model's answer rendered as Markdown (GFM: tables, task lists, strikethrough, autolinks). Raw HTML in
 * the answer is never rendered, links open in a new tab without access to this page, and code blocks are
 * highlighted with CSS classes (no inline styles, no runtime network) and get a copy button. Safe to
 * re-render on every streamed delta: an unfinished fence or table simply renders as far as it goes.
 */
import { isValidElement, memo, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { CopyButton } from "./copy-button";

/** The text of a rendered node tree (the code a highlighted block shows). */
function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return "";
}

const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
  pre: ({ children }) => {
    const code = textOf(children).replace(/\n$/, "");
    const language = isValidElement<{ className?: string }>(children)
      ? /language-([\w-]+)/.exec(children.props.className ?? "")?.[1]
      : undefined;
    return (
      <div className="md-code" data-testid="md-code">
        <div className="md-code-bar">
          <span className="muted small">{language ?? "text"}</span>
          <CopyButton text={code} label="Copy code" />
        </div>
        <pre>{children}</pre>
      </div>
    );
  },
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
  // Headings inside an answer sit below the page's own headings.
  h1: ({ children }) => <h3>{children}</h3>,
  h2: ({ children }) => <h3>{children}</h3>,
  h3: ({ children }) => <h4>{children}</h4>,
  h4: ({ children }) => <h5>{children}</h5>,
  // GFM task list boxes: read-only, named for screen readers.
  input: ({ type, checked }) =>
    type === "checkbox" ? (
      <input type="checkbox" checked={!!checked} disabled readOnly aria-label={checked ? "Done" : "Not done"} />
    ) : null,
  img: ({ alt }) => <span className="muted">[image: {alt || "no description"}]</span>,
};

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown" data-testid="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[[rehypeHighlight, { detect: false }]]}
        skipHtml
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});
