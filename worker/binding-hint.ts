/**
 * A hint for a program that failed on a TypeError after naming a binding its run does not have: QuickJS
 * says only "not a function" (a misspelled tool) or "cannot read property 'list_events' of undefined" (a
 * misspelled App), without the expression. The program's text is searched for `apps.<app>.<tool>` names
 * that are not among the run's bindings, and the nearest real one is offered. Host-side only: nothing in the
 * sandbox changes, and a program that throws a TypeError of its own gets the same hint (it names only what
 * the program itself wrote and what the run could call).
 */

/** `apps.x.y` members that are the prelude's own, not bindings. */
const OWN = new Set(["call", "$search", "$describe"]);
const REFERENCE = /\bapps\s*\.\s*([A-Za-z_$][\w$]*)(?:\s*\.\s*([A-Za-z_$][\w$]*))?/g;

/** The message with a hint appended when `code` names an App or tool the run does not have; else unchanged. */
export function withBindingHint(message: string, code: string, bindings: readonly string[]): string {
  if (!message.startsWith("TypeError")) return message;
  const known = new Set(bindings);
  const apps = new Set(bindings.map((b) => b.slice(0, b.indexOf("."))));
  for (const [, app, tool] of code.matchAll(REFERENCE)) {
    if (!app || OWN.has(app)) continue;
    if (!apps.has(app)) {
      const near = nearest(app, [...apps]);
      return `${message} (apps.${app} is not an App this run can call${near ? `; did you mean apps.${near}?` : ""})`;
    }
    if (tool && !known.has(`${app}.${tool}`)) {
      const tools = bindings.filter((b) => b.startsWith(`${app}.`)).map((b) => b.slice(app.length + 1));
      const near = nearest(tool, tools);
      return `${message} (apps.${app}.${tool} is not a tool of ${app}${near ? `; did you mean apps.${app}.${near}?` : ""})`;
    }
  }
  return message;
}

/**
 * The closest of `names` to `name` by edit distance, if within a third of its length (at least 2); else one
 * that contains it or is contained in it (`work_email` for `email`), the shortest difference first.
 */
function nearest(name: string, names: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const d = distance(wanted, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined) return best;
  const overlapping = names.filter((candidate) => {
    const c = candidate.toLowerCase();
    return Math.min(c.length, wanted.length) >= 3 && (c.includes(wanted) || wanted.includes(c));
  });
  return overlapping.sort((a, b) => Math.abs(a.length - name.length) - Math.abs(b.length - name.length))[0];
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = row;
  }
  return previous[b.length] as number;
}
