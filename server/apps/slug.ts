/**
 * Binding names (SPEC.md "Binding"): lowercase, every run of non-alphanumerics becomes `_`, trimmed of
 * `_`. Clashes are resolved deterministically: items are taken in the given order (creation order for
 * connections, name order for tools) and a later one gets the first free `_2`, `_3`, … suffix.
 */
import "server-only";
export function slugify(text: string, fallback: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return slug || fallback;
}

export interface SlugAssignment {
  slug: string;
  /** Set when the item did not get its plain slug: the slug it wanted. */
  wanted?: string;
}

/** Assigns unique slugs in order; `reserved` slugs are never handed out. */
export function assignSlugs(bases: readonly string[], reserved: ReadonlySet<string> = new Set()): SlugAssignment[] {
  const taken = new Set(reserved);
  return bases.map((base) => {
    if (!taken.has(base)) {
      taken.add(base);
      return { slug: base };
    }
    let n = 2;
    while (taken.has(`${base}_${n}`)) n += 1;
    const slug = `${base}_${n}`;
    taken.add(slug);
    return { slug, wanted: base };
  });
}
