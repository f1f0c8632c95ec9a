"use client";
/**
 * An App asks for input (MCP elicitation): a form generated from its requested schema (text, numbers,
 * yes/no, one choice, several choices), or (URL mode) a link the person opens with Done / Decline,
 * answered outside the program. A program's call waits (its run is Waiting) until the answer.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { PendingInputView } from "@/server/services/app-operations";
import { useTRPC } from "../_lib/trpc";

type Choice = { const?: unknown; title?: string };
type Prop = {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Choice[];
  anyOf?: Choice[];
  items?: { enum?: unknown[]; anyOf?: Choice[]; oneOf?: Choice[] };
  default?: unknown;
};
type Value = string | boolean | string[];

/** The choices of a one-of or several-of field, with the label to show for each. */
function choicesOf(
  p: { enum?: unknown[]; enumNames?: string[]; oneOf?: Choice[]; anyOf?: Choice[] } | undefined,
): { value: string; label: string }[] | null {
  if (!p) return null;
  if (Array.isArray(p.enum)) return p.enum.map((v, i) => ({ value: String(v), label: p.enumNames?.[i] ?? String(v) }));
  const listed = p.oneOf ?? p.anyOf;
  if (Array.isArray(listed) && listed.every((c) => c && "const" in c))
    return listed.map((c) => ({ value: String(c.const), label: c.title ?? String(c.const) }));
  return null;
}

function initial(p: Prop): Value {
  if (p.type === "boolean") return Boolean(p.default);
  if (p.type === "array") return Array.isArray(p.default) ? p.default.map(String) : [];
  return p.default === undefined ? "" : String(p.default);
}

export function InputForm({ input }: { input: PendingInputView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const properties = (input.requestedSchema.properties ?? {}) as Record<string, Prop>;
  const required = new Set((input.requestedSchema.required as string[] | undefined) ?? []);
  const [values, setValues] = useState<Record<string, Value>>(() =>
    Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, initial(p)])),
  );
  const answer = useMutation(
    trpc.appOperations.answer.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }),
  );
  const set = (key: string, value: Value) => setValues((current) => ({ ...current, [key]: value }));
  const content = () =>
    Object.fromEntries(
      Object.entries(properties)
        .filter(
          ([k]) =>
            required.has(k) || (Array.isArray(values[k]) ? (values[k] as string[]).length > 0 : values[k] !== ""),
        )
        .map(([k, p]) => [k, p.type === "number" || p.type === "integer" ? Number(values[k]) : values[k]!]),
    );
  const id = (key: string) => `in-${input.operationId}-${key}`;
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
        <strong style={{ flex: 1 }}>
          <code>apps.{input.binding}</code>
        </strong>
      </header>
      <section className="stack">
        <p style={{ margin: 0 }}>
          <span className="muted small">The App asks: </span>
          {input.message}
        </p>
        {input.mode === "url" && input.url && (
          <p style={{ margin: 0 }}>
            {/* The person opens the App's page; the model never sees or follows it. */}
            <a href={input.url} target="_blank" rel="noopener noreferrer" data-testid="input-url">
              {input.url}
            </a>
            <span className="muted small"> — open it, finish there, then press Done.</span>
          </p>
        )}
        {Object.entries(properties).map(([key, p]) => {
          const label = `${p.title ?? key}${required.has(key) ? " *" : ""}`;
          const hint = p.description && <span className="hint">{p.description}</span>;
          if (p.type === "boolean") {
            return (
              <div key={key} className="check">
                <input
                  id={id(key)}
                  type="checkbox"
                  checked={Boolean(values[key])}
                  onChange={(e) => set(key, e.target.checked)}
                />
                <label htmlFor={id(key)}>{label}</label>
              </div>
            );
          }
          if (p.type === "array") {
            const choices = choicesOf(p.items) ?? [];
            const chosen = (values[key] as string[] | undefined) ?? [];
            return (
              <fieldset key={key} className="field">
                <legend>{label}</legend>
                {choices.map((c) => (
                  <div key={c.value} className="check">
                    <input
                      id={id(`${key}-${c.value}`)}
                      type="checkbox"
                      checked={chosen.includes(c.value)}
                      onChange={(e) =>
                        set(key, e.target.checked ? [...chosen, c.value] : chosen.filter((v) => v !== c.value))
                      }
                    />
                    <label htmlFor={id(`${key}-${c.value}`)}>{c.label}</label>
                  </div>
                ))}
                {hint}
              </fieldset>
            );
          }
          const choices = choicesOf(p);
          return (
            <div key={key} className="field">
              <label htmlFor={id(key)}>{label}</label>
              {choices ? (
                <select id={id(key)} value={String(values[key])} onChange={(e) => set(key, e.target.value)}>
                  <option value="" />
                  {choices.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={id(key)}
                  inputMode={p.type === "number" || p.type === "integer" ? "decimal" : undefined}
                  value={String(values[key])}
                  required={required.has(key)}
                  onChange={(e) => set(key, e.target.value)}
                />
              )}
              {hint}
            </div>
          );
        })}
        {answer.error && (
          <p role="alert" className="error-text small">
            {answer.error.message}
          </p>
        )}
        <div className="row">
          <button className="primary" type="submit" disabled={answer.isPending}>
            {input.mode === "url" ? "Done" : "Send answer"}
          </button>
          <button
            type="button"
            disabled={answer.isPending}
            onClick={() => answer.mutate({ operationId: input.operationId, answer: { action: "decline" } })}
          >
            Decline
          </button>
        </div>
      </section>
    </form>
  );
}
