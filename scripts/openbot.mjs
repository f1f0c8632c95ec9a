// `npm run openbot -- <command>`: the TypeScript command line (server/cli/main.ts).
import { runTs } from "./run-ts.mjs";

process.exit(await runTs("server/cli/main.ts", "cli.mjs", process.argv.slice(2)));
