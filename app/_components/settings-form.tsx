"use client";
/**
 * Admin → Settings: Code Mode on/off and its limits. Each field is checked with the server's own schema
 * as you type; a change made against an old version is refused by the server, and the form then merges:
 * fields you left alone take the newer values, fields you changed keep yours (a field both changed says
 * what the other side set), and nothing is saved until you save again. Your edit is never thrown away.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { CODE_MODE_RANGES, type CodeModeSettings, codeModeSchema, type PlatformSettings } from "@/contracts/settings";
import { useTRPC } from "../_lib/trpc";

type NumField = keyof typeof CODE_MODE_RANGES;
const FIELDS: { key: NumField; label: string; hint: string }[] = [
  {
    key: "timeoutMs",
    label: "Time limit (ms)",
    hint: "The program's own running time; waiting for App calls does not count.",
  },
  { key: "memoryMb", label: "Memory (MB)", hint: "A hard cap on the sandbox's memory." },
  { key: "outputBytes", label: "Output (bytes)", hint: "Largest return value (as JSON) and log text kept." },
  { key: "maxPendingCalls", label: "Calls in flight", hint: "App calls running at once; the rest queue." },
  {
    key: "maxServerRuns",
    label: "Server runs at once",
    hint: "Programs the server runs at once (all people); the rest queue.",
  },
  {
    key: "maxServerRunsPerUser",
    label: "Server runs per person",
    hint: "Programs one person may have running on the server; the rest queue.",
  },
  {
    key: "maxQueuedRunsPerUser",
    label: "Queued runs per person",
    hint: "Server runs one person may have waiting; beyond it new runs are refused.",
  },
];

/** The schema's messages name the API field ("timeoutMs must be …"); the form says the label instead. */
const labelled = (message: string) =>
  FIELDS.reduce((text, f) => text.replace(new RegExp(`\\b(codeMode\\.)?${f.key}\\b`, "g"), f.label), message);

type Draft = { enabled: boolean; traceArguments: boolean } & Record<NumField, string>;
type DraftKey = keyof Draft;
const DRAFT_KEYS: DraftKey[] = ["enabled", "traceArguments", ...FIELDS.map((f) => f.key)];
const toDraft = (c: CodeModeSettings): Draft => ({
  enabled: c.enabled,
  traceArguments: c.traceArguments,
  ...(Object.fromEntries(FIELDS.map((f) => [f.key, String(c[f.key])])) as Record<NumField, string>),
});

/**
 * After a conflict: `mine` on top of `theirs` (the newer saved values), field by field against `base` (what
 * `mine` was edited from). Also the fields both changed to different values, with what the other side set.
 */
function merge(base: Draft, mine: Draft, theirs: Draft): { draft: Draft; clashes: Partial<Record<DraftKey, string>> } {
  const draft = { ...theirs };
  const clashes: Partial<Record<DraftKey, string>> = {};
  for (const key of DRAFT_KEYS) {
    if (mine[key] === base[key]) continue;
    (draft as Record<DraftKey, unknown>)[key] = mine[key];
    if (theirs[key] !== base[key] && theirs[key] !== mine[key]) clashes[key] = String(theirs[key]);
  }
  return { draft, clashes };
}

/** A field's number: plain decimal digits only (Number() also read "0x40" as 64 and "1e3" as 1000). */
const decimal = (text: string): number => (/^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN);

function fieldErrors(draft: Draft): Partial<Record<NumField, string>> {
  const candidate = {
    enabled: draft.enabled,
    traceArguments: draft.traceArguments,
    ...Object.fromEntries(FIELDS.map((f) => [f.key, decimal(draft[f.key])])),
  };
  const parsed = codeModeSchema.safeParse(candidate);
  const errors: Partial<Record<NumField, string>> = {};
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as NumField;
      errors[key] ??= labelled(
        Number.isNaN(candidate[key as keyof typeof candidate])
          ? `${key} must be a whole number, in digits`
          : issue.message,
      );
    }
  }
  return errors;
}

export function SettingsForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.settings.get.queryOptions());
  const [draft, setDraft] = useState<Draft | null>(null);
  /** The saved values the draft was edited from (for the merge after a conflict). */
  const [base, setBase] = useState<Draft | null>(null);
  const [clashes, setClashes] = useState<Partial<Record<DraftKey, string>>>({});
  const [version, setVersion] = useState<number | null>(null);
  const [notice, setNotice] = useState<{ kind: "ok" | "conflict" | "error"; text: string } | null>(null);
  const [serverErrors, setServerErrors] = useState<Partial<Record<string, string>>>({});

  useEffect(() => {
    if (settings.data && draft === null) {
      setDraft(toDraft(settings.data.codeMode));
      setBase(toDraft(settings.data.codeMode));
      setVersion(settings.data.version);
    }
  }, [settings.data, draft]);

  const save = useMutation(
    trpc.settings.update.mutationOptions({
      onSuccess: (next) => {
        queryClient.setQueryData(trpc.settings.get.queryKey(), next);
        setDraft(toDraft(next.codeMode));
        setBase(toDraft(next.codeMode));
        setClashes({});
        setVersion(next.version);
        setServerErrors({});
        setNotice({ kind: "ok", text: `Saved (version ${next.version}).` });
      },
      onError: (error) => {
        const details = (
          error.data as
            | { details?: { current?: PlatformSettings; fields?: { field: string; message: string }[] } }
            | undefined
        )?.details;
        if (error.data?.code === "CONFLICT" && details?.current) {
          queryClient.setQueryData(trpc.settings.get.queryKey(), details.current);
          const theirs = toDraft(details.current.codeMode);
          const merged = draft && base ? merge(base, draft, theirs) : { draft: theirs, clashes: {} };
          setDraft(merged.draft);
          setBase(theirs);
          setClashes(merged.clashes);
          setVersion(details.current.version);
          const both = Object.keys(merged.clashes).length;
          setNotice({
            kind: "conflict",
            text: `Someone else changed the settings meanwhile (now version ${details.current.version}). Nothing was saved: the form keeps your changes and shows theirs in the fields you left alone${both ? `; ${both === 1 ? "one field" : `${both} fields`} you both changed ${both === 1 ? "says" : "say"} what they set` : ""}. Save again to save it as shown.`,
          });
          return;
        }
        if (details?.fields) {
          setServerErrors(
            Object.fromEntries(details.fields.map((f) => [f.field.replace(/^codeMode\./, ""), labelled(f.message)])),
          );
        }
        setNotice({ kind: "error", text: labelled(error.message) });
      },
    }),
  );

  if (settings.error)
    return (
      <p role="alert" className="error-text">
        {settings.error.message}
      </p>
    );
  if (!draft || version === null) return <p className="muted">Loading settings…</p>;
  const errors = fieldErrors(draft);
  const invalid = Object.keys(errors).length > 0;

  return (
    <form
      className="panel stack"
      aria-label="Code Mode settings"
      onSubmit={(e) => {
        e.preventDefault();
        if (invalid) return;
        setNotice(null);
        save.mutate({
          expectedVersion: version,
          codeMode: {
            enabled: draft.enabled,
            traceArguments: draft.traceArguments,
            ...Object.fromEntries(FIELDS.map((f) => [f.key, decimal(draft[f.key])])),
          },
        });
      }}
    >
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h2 style={{ margin: 0 }}>Code Mode</h2>
        <span className="muted small" data-testid="settings-version">
          Version {version}
        </span>
      </div>
      <p className="muted small" style={{ margin: 0 }}>
        With Code Mode on, programs call the tools of connected Apps. These limits protect the server and are the same
        on every instance, so a re-run behaves the same.
      </p>
      <label className="check">
        <input
          type="checkbox"
          name="enabled"
          checked={draft.enabled}
          onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })}
        />
        <span>Code Mode enabled</span>
      </label>
      {clashes.enabled !== undefined && <Clash value={clashes.enabled === "true" ? "on" : "off"} />}
      <label className="check">
        <input
          type="checkbox"
          name="traceArguments"
          checked={draft.traceArguments}
          onChange={(e) => setDraft({ ...draft, traceArguments: e.target.checked })}
        />
        <span>
          Traces carry call arguments (vault secrets stay redacted; only with OTEL_EXPORTER_OTLP_ENDPOINT set)
        </span>
      </label>
      {clashes.traceArguments !== undefined && <Clash value={clashes.traceArguments === "true" ? "on" : "off"} />}
      <div className="grid-2">
        {FIELDS.map((f) => {
          const r = CODE_MODE_RANGES[f.key];
          const message = errors[f.key] ?? serverErrors[f.key];
          return (
            <div className="field" key={f.key}>
              <label htmlFor={f.key}>{f.label}</label>
              <input
                id={f.key}
                name={f.key}
                inputMode="numeric"
                value={draft[f.key]}
                aria-invalid={message ? true : undefined}
                aria-describedby={`${f.key}-hint${message ? ` ${f.key}-error` : ""}`}
                onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
              />
              <span className="hint" id={`${f.key}-hint`}>
                {f.hint} {r.min}–{r.max}, default {r.default}.
              </span>
              {message && (
                <span className="error-text" id={`${f.key}-error`} role="alert">
                  {message}
                </span>
              )}
              {clashes[f.key] !== undefined && <Clash value={clashes[f.key] as string} />}
            </div>
          );
        })}
      </div>
      {notice && (
        <p role="status" className={notice.kind === "ok" ? "ok-text" : "error-text"} data-testid="settings-notice">
          {notice.text}
        </p>
      )}
      <div className="row">
        <button className="primary" type="submit" disabled={invalid || save.isPending}>
          {save.isPending ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}

/** A field both you and someone else changed: what they set (the field shows yours). */
function Clash({ value }: { value: string }) {
  return (
    <span className="hint" data-testid="settings-clash">
      Someone else set {value} meanwhile; yours is shown.
    </span>
  );
}
