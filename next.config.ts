import type { NextConfig } from "next";

const config: NextConfig = {
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "quickjs-emscripten-core",
    "@jitl/quickjs-wasmfile-release-sync",
    "@modelcontextprotocol/sdk",
  ],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
