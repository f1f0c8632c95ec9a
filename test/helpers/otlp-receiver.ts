/**
 * A local OTLP/HTTP trace receiver: accepts `POST /v1/traces` (the JSON encoding the SDK's http exporter
 * sends), keeps each raw body (tests search the bytes) and the spans decoded from it.
 */
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  raw: Buffer[];
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
const value = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));

export async function startOtlpReceiver(port: number): Promise<OtlpReceiver> {
  const raw: Buffer[] = [];
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      raw.push(body);
      const parsed = JSON.parse(body.toString("utf8")) as {
        resourceSpans?: {
          scopeSpans?: {
            spans?: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              attributes?: { key: string; value: AnyValue }[];
            }[];
          }[];
        }[];
      };
      for (const rs of parsed.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, value(a.value)])),
            });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    raw,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
