/**
 * Declarations of the bindings: generated for the built-in apps, the three presets and a hostile server,
 * they compile with the TypeScript compiler (strict, in-memory host) and type a program that uses them;
 * hostile descriptions and schemas cannot add declarations; search, connection filter, order and size.
 */
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declarations, safeText } from "@/server/apps/declarations";
import type { AppRegistry } from "@/server/apps/registry";
import { ODD_SERVER, startApps, type TestApps } from "./helpers";

let t: TestApps;
let apps: AppRegistry;
beforeAll(async () => {
  t = await startApps();
  apps = t.registry;
  const added = await Promise.all([
    apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } }),
    apps.add({ name: "Memory", transport: { type: "preset", preset: "memory" } }),
    apps.add({ name: "Files", transport: { type: "preset", preset: "filesystem" } }),
    apps.add({ name: "Odd", transport: { type: "stdio", command: process.execPath, args: [ODD_SERVER] } }),
  ]);
  expect(added.map((v) => v.status)).toEqual(["connected", "connected", "connected", "connected"]);
});
afterAll(() => t?.close());

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  types: [],
};

/** Diagnostics of the given in-memory files (lib files come from the TypeScript package). */
function diagnose(files: Record<string, string>): string[] {
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    name in files
      ? ts.createSourceFile(name, files[name]!, language)
      : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => name in files || fileExists.call(host, name);
  host.readFile = (name) => files[name] ?? readFile.call(host, name);
  const program = ts.createProgram(Object.keys(files), OPTIONS, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

/** The names declared at the top level of a declarations text. */
function topLevel(text: string): string[] {
  const file = ts.createSourceFile("d.ts", text, ts.ScriptTarget.ES2022);
  return file.statements.map((s) => {
    if (ts.isVariableStatement(s)) return s.declarationList.declarations.map((d) => d.name.getText(file)).join(",");
    if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s) || ts.isModuleDeclaration(s))
      return s.name.getText(file);
    return ts.SyntaxKind[s.kind];
  });
}

describe("declarations", () => {
  it("compile for the built-in apps, the presets and a hostile server, and type a program", async () => {
    const text = await declarations(apps.tools(), { maxBytes: 1_000_000 });
    expect(text).not.toContain("left out");
    for (const slug of ["work_calendar", "notes", "email", "everything", "memory", "files", "odd"])
      expect(text).toContain(`  ${slug}: {`);
    const program = `
async function calendar(): Promise<string[]> {
  const [today, tomorrow] = await Promise.all([
    apps.work_calendar.list_events({ day: "2026-10-23" }),
    apps.work_calendar.list_events({ day: "2026-10-24" }),
  ]);
  const busy = [today, tomorrow].flatMap((r) => r.structuredContent.events);
  const sum = await apps.everything.get_sum({ a: 1, b: 2 });
  const first = sum.content[0];
  if (first?.type === "text") console.log(first.text);
  await apps.notes.write_note({ title: "t", body: "b" });
  // @ts-expect-error the calendar wants a day
  await apps.work_calendar.list_events({ date: "2026-10-23" });
  // @ts-expect-error attendees is a number
  busy.map((e) => e.attendees.toUpperCase());
  return busy.filter((e) => e.attendees > 10).map((e) => e.title);
}
declare const console: { log(...args: unknown[]): void };
`;
    expect(diagnose({ "/apps.d.ts": text, "/program.ts": program })).toEqual([]);
  });

  it("hostile descriptions and schemas stay inside comments and types", async () => {
    const text = await declarations(apps.tools(), { connection: "odd" });
    expect(diagnose({ "/apps.d.ts": text })).toEqual([]);
    const names = topLevel(text);
    expect(names.filter((n) => !n.startsWith("Apps$"))).toEqual(["McpResult", "McpContent", "apps"]);
    expect(
      diagnose({ "/apps.d.ts": text, "/use.ts": "export const x: number = pwned + injected;" }).join("\n"),
    ).toMatch(/Cannot find name 'pwned'/);
    expect(text).toContain("Looks harmless *\\/ declare const pwned: number;");
    expect(text).not.toContain("injected: 1");
    expect(text).not.toMatch(/[\u2028\u2029\u0000]/);
    const file = ts.createSourceFile("d.ts", text, ts.ScriptTarget.ES2022);
    const appsType = (
      file.statements.find(ts.isVariableStatement)!.declarationList.declarations[0]!.type as ts.TypeLiteralNode
    ).members;
    const odd = appsType.find((m) => m.name?.getText(file) === "odd") as ts.PropertySignature;
    const members = (odd.type as ts.TypeLiteralNode).members.map((m) => m.name?.getText(file));
    expect(members).toEqual(
      ["add_tool", "do_thing", "do_thing_2", "extra", "fail", "hostile"].filter(
        (m) => m !== "extra" || text.includes("extra("),
      ),
    );
    if (process.env.SHOW_DECLARATIONS) console.log(text);
  });

  it("safeText cannot end a comment", () => {
    for (const evil of ["*/", "**/", "*\u2028/", "a*/b*/", "/* */"]) {
      const text = `/** ${safeText(evil)} */ declare const ok: 1;`;
      expect(topLevel(text)).toEqual(["ok"]);
    }
  });

  it("filters by word and by connection, in a stable order", async () => {
    const byWord = await declarations(apps.tools(), { query: "events" });
    expect(byWord).toContain("list_events(");
    expect(byWord).not.toContain("create_event(");
    const byConnectionName = await declarations(apps.tools(), { query: "calendar" });
    expect(byConnectionName).toContain("create_event(");
    expect(byConnectionName).not.toContain("list_notes(");
    const notes = await declarations(apps.tools(), { connection: "notes" });
    expect(notes).toContain("  notes: {");
    expect(notes).not.toContain("work_calendar: {");
    expect(await declarations(apps.tools(), { connection: "Notes" })).toBe(notes);
    expect(await declarations(apps.tools(), { query: "zzz-nothing" })).toContain("No binding matches");
    expect(await declarations([...apps.tools()], {})).toBe(await declarations(apps.tools(), {}));
  });

  it("is bounded in size, saying how many bindings were left out", async () => {
    const text = await declarations(apps.tools(), { maxBytes: 4000 });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4000);
    const left = /\/\/ (\d+) more bindings? left out/.exec(text);
    expect(Number(left?.[1])).toBeGreaterThan(10);
    expect(diagnose({ "/apps.d.ts": text })).toEqual([]);
  });
});
