/**
 * PGlite runs every statement with parameters as a named prepared statement (server/db/pglite-prepared.ts):
 * a text is prepared once and reused, values and rows come out exactly as PGlite's own query gives them,
 * errors keep their SQLSTATE fields, a statement whose tables changed shape is prepared again, and a
 * statement inside a transaction sees that transaction. A use after the first sends no Describe (the row
 * description kept from the preparation), and a renamed column is still seen under its new name.
 */
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDb } from "@/server/db/client";
import { preparedStatements } from "@/server/db/pglite-prepared";

let db: Db;
beforeAll(async () => {
  db = await openDb({});
  await db.query(
    "create table things (id text primary key, n int, big bigint, flag boolean, doc jsonb, tags text[], note text)",
  );
});
afterAll(() => db?.close());

const prepared = async (fragment: string) =>
  (
    await db.query<{ n: number }>(
      "select count(*)::int as n from pg_prepared_statements where statement like $1 and statement not like '%pg_prepared_statements%'",
      [`%${fragment}%`],
    )
  )[0]!.n;

describe("PGlite prepared statements", () => {
  it("prepares a statement text once and reuses it", async () => {
    for (let i = 0; i < 5; i++) await db.query("insert into things (id, n) values ($1, $2)", [`p${i}`, i]);
    const rows = await db.query<{ id: string }>("select id from things where n >= $1 order by id", [3]);
    expect(rows.map((r) => r.id)).toEqual(["p3", "p4"]);
    expect(await prepared("insert into things (id, n) values")).toBe(1);
    expect(await prepared("select id from things where n >=")).toBe(1);
  });

  it("gives the same values and rows as PGlite's own query (nulls, bigints, booleans, json, arrays)", async () => {
    const values = ["v1", 7, 9007199254740993n, true, { a: [1, "x", null] }, ["a", "b,c", 'd"e'], null] as const;
    await db.query("insert into things (id, n, big, flag, doc, tags, note) values ($1, $2, $3, $4, $5, $6, $7)", [
      ...values,
    ]);
    const viaPrepared = await db.query("select * from things where id = $1", ["v1"]);
    // The same row read through PGlite's own query (a transaction's statements take that path).
    const viaQuery = await db.transaction((tx) => tx.query("select * from things where id = $1", ["v1"]));
    expect(viaPrepared).toEqual(viaQuery);
    expect(viaPrepared[0]).toMatchObject({ id: "v1", n: 7, flag: true, doc: { a: [1, "x", null] }, note: null });
    expect(viaPrepared[0]!.tags).toEqual(["a", "b,c", 'd"e']);
    expect(String(viaPrepared[0]!.big)).toBe("9007199254740993");
  });

  it("keeps a statement error's SQLSTATE and still works after it", async () => {
    const error = (await db.query("insert into things (id) values ($1)", ["p0"]).catch((e: unknown) => e)) as {
      code?: string;
      constraint?: string;
    };
    expect(error.code).toBe("23505");
    expect(error.constraint).toBe("things_pkey");
    const bad = (await db.query("select nope from things where id = $1", ["p0"]).catch((e: unknown) => e)) as {
      code?: string;
    };
    expect(bad.code).toBe("42703");
    expect(await db.query("select n from things where id = $1", ["p1"])).toEqual([{ n: 1 }]);
  });

  it("prepares a statement again when its table changed shape", async () => {
    const before = await db.query<Record<string, unknown>>("select * from things where id = $1", ["p2"]);
    expect(Object.keys(before[0]!)).not.toContain("extra");
    await db.query("alter table things add column extra text default 'x'");
    const after = await db.query<Record<string, unknown>>("select * from things where id = $1", ["p2"]);
    expect(after[0]!.extra).toBe("x");
  });

  it("runs a transaction's statements in that transaction", async () => {
    await db
      .transaction(async (tx) => {
        await tx.query("update things set n = $1 where id = $2", [100, "p1"]);
        expect(await tx.query("select n from things where id = $1", ["p1"])).toEqual([{ n: 100 }]);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await db.query("select n from things where id = $1", ["p1"])).toEqual([{ n: 1 }]);
  });

  it("reads a renamed column under its new name (the kept row description is not reused for it)", async () => {
    await db.query("create table renamed (id text primary key, old_name text)");
    await db.query("insert into renamed values ($1, $2)", ["r1", "v"]);
    expect(await db.query("select * from renamed where id = $1", ["r1"])).toEqual([{ id: "r1", old_name: "v" }]);
    await db.query("alter table renamed rename column old_name to new_name");
    expect(await db.query("select * from renamed where id = $1", ["r1"])).toEqual([{ id: "r1", new_name: "v" }]);
    // A rename inside a transaction (a migration's step) too.
    await db.transaction((tx) => tx.query("alter table renamed rename column new_name to newest"));
    expect(await db.query("select * from renamed where id = $1", ["r1"])).toEqual([{ id: "r1", newest: "v" }]);
  });

  it("reads rows as PGlite's own query does: more types, unicode, NULLs, a reply larger than the read buffer", async () => {
    const big = `${"é☃𝄞".repeat(30_000)}end`;
    const sql = `select $1::text as big, now() as at, 12.50::numeric as price, '\\x00ff10'::bytea as raw,
        array[1, null, 3]::int[] as ints, '{"k": "v"}'::json as doc, null::text as nothing, 1 as same, 2 as same
      from generate_series(1, $2::int) g`;
    const viaPrepared = await db.query<Record<string, unknown>>(sql, [big, 3]);
    const viaQuery = await db.transaction((tx) => tx.query<Record<string, unknown>>(sql, [big, 3]));
    expect(viaPrepared).toHaveLength(3);
    expect(viaPrepared.map((r) => ({ ...r, at: null }))).toEqual(viaQuery.map((r) => ({ ...r, at: null })));
    expect(viaPrepared[0]!.at).toBeInstanceOf(Date);
    expect(viaPrepared[0]!.big).toBe(big);
    expect(viaPrepared[0]!.raw).toEqual(new Uint8Array([0, 255, 16]));
    expect(viaPrepared[0]!.same).toBe(2);
    // A small reply after the large one is read whole (the buffer is reused from the start).
    expect(await db.query("select $1::text as t", ["short"])).toEqual([{ t: "short" }]);
  });

  it("delivers a NOTIFY sent by a prepared statement to each listener once", async () => {
    const heard: string[] = [];
    await db.listen("prepared_notify", (payload) => heard.push(payload));
    await db.notify("prepared_notify", "one");
    await db.query("select pg_notify($1, $2)", ["prepared_notify", "two"]);
    await db.query("select 1");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toEqual(["one", "two"]);
  });

  it("runs a bare select as a prepared statement too", async () => {
    await db.query("select count(*)::int as n from things where flag");
    await db.query("select count(*)::int as n from things where flag");
    expect(await prepared("select count(*)::int as n from things where flag")).toBe(1);
  });
});

/** The protocol message types (one letter each) of every buffer sent to `pg`. */
function recordSent(pg: PGlite): string[][] {
  const sent: string[][] = [];
  const types = (message: Uint8Array) => {
    const found: string[] = [];
    const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
    for (let at = 0; at < message.byteLength; at += 1 + view.getInt32(at + 1))
      found.push(String.fromCharCode(message[at]!));
    sent.push(found);
  };
  const original = pg.execProtocol.bind(pg);
  pg.execProtocol = (message, options) => {
    types(message);
    return original(message, options);
  };
  const originalStream = pg.execProtocolRawStream.bind(pg);
  pg.execProtocolRawStream = (message, options) => {
    types(message);
    return originalStream(message, options);
  };
  return sent;
}

describe("PGlite prepared statements on the wire", () => {
  let pg: PGlite;
  beforeAll(async () => {
    pg = await PGlite.create();
    await pg.exec("create table wire (id int primary key, name text)");
  });
  afterAll(() => pg?.close());

  it("describes a statement once: later uses are Bind, Execute, Sync with the kept row description", async () => {
    const statements = preparedStatements(pg, () => undefined);
    const sent = recordSent(pg);
    await statements.run("insert into wire values ($1, $2)", [1, "one"]);
    for (let i = 0; i < 3; i++) {
      expect(await statements.run("select id, name from wire where id = $1", [1])).toEqual([{ id: 1, name: "one" }]);
    }
    expect(await statements.run("select id, name from wire where id = $1", [2])).toEqual([]);
    // Parse + Describe(statement) once per text, then one Bind/Execute/Sync per use and no Describe.
    expect(sent).toEqual([
      ["P", "D", "S"],
      ["B", "E", "S"],
      ["P", "D", "S"],
      ["B", "E", "S"],
      ["B", "E", "S"],
      ["B", "E", "S"],
      ["B", "E", "S"],
    ]);
  });
});
