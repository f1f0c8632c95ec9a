"use client";
/** An App asks for input (MCP elicitation): a form generated from its requested schema, answered outside the program. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { PendingInputView } from "@/server/services/app-operations";
import { useTRPC } from "../_lib/trpc";

type Prop = { type?: string; title?: string; description?: string; enum?: unknown[]; default?: unknown };

export function InputForm({ input }: { input: PendingInputView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const properties = (input.requestedSchema.properties ?? {}) as Record<string, Prop>;
  const required = new Set((input.requestedSchema.required as string[] | undefined) ?? []);
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, p.type === "boolean" ? Boolean(p.default) : p.default === undefined ? "" : String(p.default)])),
  );
  const answer = useMutation(trpc.appOperations.answer.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }));
  const content = () =>
    Object.fromEntries(
      Object.entries(properties)
        .filter(([k]) => values[k] !== "" || required.has(k))
        .map(([k, p]) => [k, p.type === "number" || p.type === "integer" ? Number(values[k]) : values[k]]),
    );
  return (
    <form
      className="run-card"
      data-testid="input-form"
      aria-label={`Input for apps.${input.binding}`}
      onSubmit={(e) => {
        e.preventDefault();
        answer.mutate({ operationId: input.operationId, answer: { action: "accept", content: content() } });
      }}
    >
      <header>
        <span className="status Waiting">Needs your input</span>
        <strong style={{ flex: 1 }}><code>apps.{input.binding}</code></strong>
      </header>
      <section className="stack">
        <p style={{ margin: 0 }}><span className="muted small">The App asks: </span>{input.message}</p>
        {Object.entries(properties).map(([key, p]) => (
          <div key={key} className={p.type === "boolean" ? "check" : "field"}>
            {p.type === "boolean" ? (
              <>
                <input id={`in-${input.operationId}-${key}`} type="checkbox" checked={Boolean(values[key])} onChange={(e) => setValues({ ...values, [key]: e.target.checked })} />
                <label htmlFor={`in-${input.operationId}-${key}`}>{p.title ?? key}</label>
              </>
            ) : (
              <>
                <label htmlFor={`in-${input.operationId}-${key}`}>{p.title ?? key}{required.has(key) ? " *" : ""}</label>
                {Array.isArray(p.enum) ? (
                  <select id={`in-${input.operationId}-${key}`} value={String(values[key])} onChange={(e) => setValues({ ...values, [key]: e.target.value })}>
                    <option value="" />
                    {p.enum.map((v) => (
                      <option key={String(v)} value={String(v)}>{String(v)}</option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={`in-${input.operationId}-${key}`}
                    inputMode={p.type === "number" || p.type === "integer" ? "decimal" : undefined}
                    value={String(values[key])}
                    required={required.has(key)}
                    onChange={(e) => setValues({ ...values, [key]: e.target.value })}
                  />
                )}
                {p.description && <span className="hint">{p.description}</span>}
              </>
            )}
          </div>
        ))}
        {answer.error && <p role="alert" className="error-text small">{answer.error.message}</p>}
        <div className="row">
          <button className="primary" type="submit" disabled={answer.isPending}>Send answer</button>
          <button type="button" disabled={answer.isPending} onClick={() => answer.mutate({ operationId: input.operationId, answer: { action: "decline" } })}>
            Decline
          </button>
        </div>
      </section>
    </form>
  );
}
