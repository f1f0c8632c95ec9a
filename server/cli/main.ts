/** The `openbot` command line (`npm run openbot -- <command>`). */
import "server-only";
import path from "node:path";
import { openDb } from "../db/client";
import { migrate } from "../db/migrate";
import { readEnv } from "../env";
import { loadKeyRing } from "../keys";
import { rotateKeyFile } from "./rotate-key";

const USAGE = "usage: npm run openbot -- rotate-key";

async function main(args: string[]): Promise<number> {
  const [command] = args;
  if (command !== "rotate-key") {
    console.error(command ? `unknown command: ${command}\n${USAGE}` : USAGE);
    return 2;
  }
  const env = readEnv();
  if (env.OPENBOT_ENCRYPTION_KEY) {
    console.error(
      "The key comes from OPENBOT_ENCRYPTION_KEY. Put the current key into OPENBOT_OLD_ENCRYPTION_KEYS, set a new OPENBOT_ENCRYPTION_KEY, and start OpenBot: values are re-encrypted when rotate-key runs with the new key set.",
    );
    return 2;
  }
  const db = await openDb({ url: env.DATABASE_URL, dataDir: path.join(env.dataDir, "pglite") });
  try {
    await migrate(db);
    const { newKeyId, moved } = await rotateKeyFile(db, env.dataDir, loadKeyRing(env));
    console.log(`Rotated the encryption key: ${moved} values re-encrypted with key ${newKeyId}.`);
    return 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
