/**
 * On Postgres a statement with parameters outside a transaction runs as a named prepared statement
 * (server/db/client.ts): each connection parses and plans it once. A statement prepared before its table
 * changed shape (another instance migrated) is run once unnamed instead of failing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import { BACKENDS } from "../helpers/databases";

const postgres = BACKENDS.find((b) => b.name === "postgres");

describe.skipIf(!postgres)("Postgres prepared statements", () => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const fresh = await postgres!.fresh();
    drop = fresh.drop;
    db = await fresh.open();
    await db.query("create table things (id text primary key, n int)");
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("prepares a statement with parameters on the connection that runs it", async () => {
    await db.query("insert into things (id, n) values ($1, $2)", ["a", 1]);
    // Every connection of the pool that ran it has it prepared; ask until one that did answers.
    let seen = 0;
    for (let i = 0; i < 20 && seen === 0; i++) {
      await db.query("select n from things where id = $1", ["a"]);
      seen = (
        await db.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements where statement = $1", [
          "select n from things where id = $1",
        ])
      )[0]!.n;
    }
    expect(seen).toBe(1);
  });

  it("runs a statement prepared before its table changed shape", async () => {
    for (let i = 0; i < 10; i++) await db.query("select * from things where id = $1", ["a"]);
    await db.query("alter table things add column extra text default 'x'");
    for (let i = 0; i < 10; i++)
      expect(await db.query("select * from things where id = $1", ["a"])).toEqual([{ id: "a", n: 1, extra: "x" }]);
  });
});
