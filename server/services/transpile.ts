/**
 * TypeScript programs are transpiled (no type check) by the TypeScript compiler's transpileModule,
 * loaded only when a TypeScript program arrives. The body is wrapped in an async function so top-level
 * `return` and `await` parse; diagnostics come back with the line and column of the program's source.
 */
import "server-only";
export type TranspileResult = { ok: true; code: string } | { ok: false; message: string };

const OPEN = "async function __openbot_program__() {\n";
const CLOSE = "\n}";

export async function transpileTypeScript(source: string): Promise<TranspileResult> {
  const ts = (await import("typescript")).default;
  const out = ts.transpileModule(OPEN + source + CLOSE, {
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.ESNext, removeComments: false },
  });
  const diagnostics = out.diagnostics ?? [];
  if (diagnostics.length > 0) {
    const messages = diagnostics.slice(0, 5).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      if (d.file && d.start !== undefined) {
        const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
        return `line ${line}, column ${character + 1}: ${text}`;
      }
      return text;
    });
    return { ok: false, message: `TypeScript: ${messages.join("; ")}` };
  }
  const js = out.outputText;
  const start = js.indexOf("{", js.indexOf("__openbot_program__")) + 1;
  const end = js.lastIndexOf("}");
  return { ok: true, code: js.slice(start, end).replace(/^\n/, "") };
}
