/** Program source with light syntax highlighting (keywords, strings, numbers, comments). */
const TOKEN =
  /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`)|\b(\d+(?:\.\d+)?)\b|\b(const|let|var|await|async|return|function|if|else|for|of|in|while|try|catch|throw|new|true|false|null|undefined|typeof|interface|type)\b/g;

export function CodeView({ code }: { code: string }) {
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
  return (
    <pre data-testid="run-code">
      <code>{parts}</code>
    </pre>
  );
}
