// Finds a Chromium for the browser tests: OPENBOT_CHROMIUM, then Debian's /usr/bin/chromium, then
// Playwright's own download. Where there is none and we are root with apt-get, installs Debian's package.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

function playwrightOwn() {
  try {
    return createRequire(import.meta.url)("playwright-core").chromium.executablePath();
  } catch {
    return undefined;
  }
}

export function findChromium({ install = true } = {}) {
  const found = [process.env.OPENBOT_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", playwrightOwn()].find(
    (p) => p && existsSync(p),
  );
  if (found) return found;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const hasApt = spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  if (install && isRoot && hasApt) {
    console.log("No Chromium found: installing Debian's chromium package for the browser tests…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
    const r = spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env });
    if (r.status === 0 && existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  }
  return null;
}
