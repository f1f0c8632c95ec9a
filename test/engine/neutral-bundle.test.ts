/**
 * The engine is runtime-neutral: bundled for a neutral platform (the browser's conditions, no Node
 * built-ins available) it builds, and it pulls in nothing from Node. The same bundling of a Node-only
 * host file fails, so this check can fail.
 */
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

async function bundleNeutral(entry: string) {
  return build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: "neutral",
    format: "esm",
    mainFields: ["module", "main"],
    conditions: ["browser", "import"],
    logLevel: "silent",
    metafile: true,
  });
}

describe("the sandbox engine is runtime-neutral", () => {
  it("bundles worker/engine.ts with no Node import", async () => {
    const result = await bundleNeutral("worker/engine.ts");
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain("worker/engine.ts");
    expect(
      inputs.filter((name) => name.startsWith("node:") || /(^|\/)node_modules\/@types\/node\//.test(name)),
    ).toEqual([]);
    expect(result.outputFiles[0]!.text).not.toMatch(/from\s*["']node:/);
  });

  it("fails for a host file that needs Node (the check is real)", async () => {
    await expect(bundleNeutral("worker/node-port.ts")).rejects.toThrow(/node:worker_threads|Could not resolve/);
  });
});
