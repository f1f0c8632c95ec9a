/**
 * OpenTelemetry traces, only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
 * set: one tracer provider per process, exporting OTLP/HTTP with the SDK's standard environment
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*). Without it nothing
 * is started and every method here is a no-op that returns null.
 *
 * The provider is not registered as the global one: Next.js traces its own requests through the global
 * API, and those spans are not ours to export. Parents are passed explicitly as W3C `traceparent` strings
 * (stored on the run's row, so every attempt on any instance joins the run's one trace).
 */
import "server-only";
import { randomBytes } from "node:crypto";
import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { logFailure } from "./log";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface SpanHandle {
  /** W3C trace context of this span, for `_meta.traceparent` of the requests made inside it. */
  readonly traceparent: string;
  readonly tracestate?: string;
  set(attributes: Attributes): void;
  event(name: string, attributes?: Attributes, at?: TimeInput): void;
  /** Ends the span; `error` marks it failed (a short kind, never a message that may carry data). */
  end(error?: string, at?: TimeInput): void;
}

export interface Telemetry {
  readonly enabled: boolean;
  /** A fresh W3C trace context for a new run (a trace id and the id its root span will have). */
  newTraceparent(): string | null;
  /** Starts a span under `parent` (a traceparent), or a new trace when there is none. */
  start(name: string, parent: string | null, attributes?: Attributes, startTime?: TimeInput): SpanHandle | null;
  /** Records the span whose id `traceparent` named beforehand (the run's root span, ended now). */
  record(name: string, traceparent: string, attributes: Attributes, startTime: TimeInput): SpanHandle | null;
  /** Exports what is buffered (platform close, SIGTERM). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const OFF: Telemetry = {
  enabled: false,
  newTraceparent: () => null,
  start: () => null,
  record: () => null,
  flush: async () => undefined,
  close: async () => undefined,
};

interface Shared {
  provider: BasicTracerProvider;
  tracer: Tracer;
  refs: number;
  /** The ids the next span takes (set just before a synchronous `startSpan`, see `record`). */
  preset: { traceId: string; spanId: string } | null;
}

const GLOBAL_KEY = Symbol.for("openbot.telemetry");
type WithShared = typeof globalThis & { [GLOBAL_KEY]?: Shared };

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

function parse(traceparent: string | null) {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) };
}

function sharedProvider(): Shared {
  const g = globalThis as WithShared;
  if (g[GLOBAL_KEY]) return g[GLOBAL_KEY];
  const shared: Shared = {
    provider: null as unknown as BasicTracerProvider,
    tracer: null as never,
    refs: 0,
    preset: null,
  };
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: "openbot" }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  shared.provider = new BasicTracerProvider({
    resource,
    idGenerator: {
      generateTraceId: () => shared.preset?.traceId ?? hex(16),
      generateSpanId: () => shared.preset?.spanId ?? hex(8),
    },
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  shared.tracer = shared.provider.getTracer("openbot");
  g[GLOBAL_KEY] = shared;
  return shared;
}

function handle(span: Span): SpanHandle {
  const sc = span.spanContext();
  const flags = (sc.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0");
  const state = sc.traceState?.serialize();
  return {
    traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}`,
    ...(state ? { tracestate: state } : {}),
    set: (attributes) => span.setAttributes(attributes),
    event: (name, attributes, at) => span.addEvent(name, attributes, at),
    end(error, at) {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute("openbot.error", error);
      span.end(at);
    },
  };
}

/** The process's telemetry: started on first use when an OTLP endpoint is configured, else off. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Telemetry {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return OFF;
  if (env.OTEL_SDK_DISABLED === "true") return OFF;
  const shared = sharedProvider();
  shared.refs += 1;
  let closed = false;
  const parentContext = (parent: string | null) => {
    const p = parse(parent);
    return p ? trace.setSpanContext(context.active(), { ...p, isRemote: true }) : undefined;
  };
  return {
    enabled: true,
    newTraceparent: () => `00-${hex(16)}-${hex(8)}-01`,
    start(name, parent, attributes, startTime) {
      const ctx = parentContext(parent);
      const options = { kind: SpanKind.INTERNAL, attributes, startTime, root: !ctx };
      return handle(shared.tracer.startSpan(name, options, ctx));
    },
    record(name, traceparent, attributes, startTime) {
      const p = parse(traceparent);
      if (!p) return null;
      // The SDK draws ids from the id generator inside this synchronous call only.
      shared.preset = { traceId: p.traceId, spanId: p.spanId };
      try {
        return handle(shared.tracer.startSpan(name, { attributes, startTime, root: true }));
      } finally {
        shared.preset = null;
      }
    },
    async flush() {
      await shared.provider.forceFlush().catch((error: unknown) => void logFailure("trace_export_failed", error));
    },
    async close() {
      if (closed) return;
      closed = true;
      shared.refs -= 1;
      await shared.provider.forceFlush().catch((error: unknown) => logFailure("trace_export_failed", error));
      if (shared.refs > 0) return;
      delete (globalThis as WithShared)[GLOBAL_KEY];
      await shared.provider.shutdown().catch(() => undefined);
    },
  };
}
