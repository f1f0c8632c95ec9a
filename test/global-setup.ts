/**
 * Once per `vitest run`: a dump of a freshly made PGlite database, from which every in-memory database of
 * the tests starts (server/db/client.ts reads OPENBOT_TEST_PGLITE_TEMPLATE) instead of running initdb
 * itself, ~1 s instead of ~4-6 s on this kind of machine, dozens of times per run. The dump is kept in the
 * temp folder under PGlite's version, so later runs reuse it; it holds nothing but an empty cluster, so a
 * database made from it is the one PGlite.create() makes (migrations still run as they would).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

export default async function setup(): Promise<void> {
  if (process.env.OPENBOT_TEST_PGLITE_TEMPLATE) return;
  const manifest = path.join(process.cwd(), "node_modules/@electric-sql/pglite/package.json");
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  const file = path.join(tmpdir(), `openbot-pglite-template-${version}.tar`);
  if (!existsSync(file)) {
    const pg = await PGlite.create();
    const dump = await pg.dumpDataDir("none");
    await pg.close();
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  }
  process.env.OPENBOT_TEST_PGLITE_TEMPLATE = file;
}
