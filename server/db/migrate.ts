/**
 * Migrations: an ordered list of SQL steps, applied once each and recorded in `schema_migrations`.
 * The same list runs on PGlite and Postgres; an advisory lock keeps instances sharing a Postgres from
 * migrating at the same time.
 */
import "server-only";
import type { Db } from "./client";
import { MIGRATIONS } from "./migrations";

export interface Migration {
  id: string;
  sql: string;
}

export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(727274)");
    await tx.query("create table if not exists schema_migrations (id text primary key, applied_at bigint not null)");
    const done = new Set((await tx.query<{ id: string }>("select id from schema_migrations")).map((r) => r.id));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query("insert into schema_migrations (id, applied_at) values ($1, $2)", [migration.id, Date.now()]);
      applied.push(migration.id);
    }
    return applied;
  });
}

/** Splits on semicolons at line ends; migrations keep one statement per `;\n`. */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !/^(--[^\n]*\n?)+$/.test(s));
}
