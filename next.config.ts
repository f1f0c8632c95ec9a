import type { NextConfig } from "next";

/**
 * The Content-Security-Policy of every response. Next's statically rendered pages carry inline bootstrap
 * scripts (no per-request nonce without rendering every page dynamically), hence 'unsafe-inline' for
 * scripts; 'wasm-unsafe-eval' lets the QuickJS worker compile its .wasm. Nothing may frame the app,
 * forms post only to it, and it connects only to itself. `next dev` also needs 'unsafe-eval'.
 */
const csp = [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'${process.env.NODE_ENV === "development" ? " 'unsafe-eval'" : ""}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const config: NextConfig = {
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "quickjs-emscripten-core",
    "@jitl/quickjs-wasmfile-release-sync",
    "@modelcontextprotocol/sdk",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
  ],
  poweredByHeader: false,
  reactStrictMode: true,
  // Prometheus scrapes `/metrics` unless told otherwise: the same route, its guard and access row
  // (`GET /v1/metrics`, admins' keys only) answer there too.
  async rewrites() {
    return [{ source: "/metrics", destination: "/v1/metrics" }];
  },
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "Content-Security-Policy", value: csp },
          { key: "X-Content-Type-Options", value: "nosniff" },
        ],
      },
    ];
  },
};

export default config;
