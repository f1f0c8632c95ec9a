// `npm run bench:tokens`: runs scripts/bench/tokens.ts (see that file). `--strict` makes a missed target
// exit with status 1.
import { root, runTs } from "./run-ts.mjs";

process.exit(
  await runTs("scripts/bench/tokens.ts", "bench/tokens.mjs", process.argv.slice(2), { cwd: root, timeout: 180_000 }),
);
