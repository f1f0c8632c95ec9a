// `npm start`: builds when the source changed since the last build, then serves the app.
import { buildIfNeeded, root } from "./build-if-needed.mjs";

process.chdir(root);
buildIfNeeded();
await import("./server.mjs");
