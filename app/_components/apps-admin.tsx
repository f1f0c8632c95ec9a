"use client";
/**
 * Admin → Apps: connected MCP servers with their status, tools and per-tool policy; add a preset, a
 * stdio command or a Streamable HTTP URL; rename, disable or remove a connection.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Policy } from "@/contracts/connections";
import { useOneAtATime } from "../_lib/one-at-a-time";
import { useTRPC } from "../_lib/trpc";
import { ErrorText, Field } from "./field";
import { ConnectButton } from "./oauth-connect";

type TransportKind = "preset" | "stdio" | "http";

/** What OpenBot tried when it connected, in words (header and environment values stay hidden). */
function triedText(t: {
  type: string;
  url?: string;
  command?: string;
  args?: string[];
  preset?: string;
  app?: string;
}): string {
  if (t.type === "http") return `Tried to reach the MCP server over Streamable HTTP at ${t.url}.`;
  if (t.type === "stdio")
    return `Tried to start the command \`${[t.command, ...(t.args ?? [])].join(" ")}\` and talk MCP over its stdio.`;
  if (t.type === "preset") return `Tried to start the ${t.preset} reference server (an npm dependency).`;
  return `Tried to start the built-in ${t.app ?? ""} app.`;
}

export function AppsAdmin() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const connections = useQuery({ ...trpc.connections.list.queryOptions(), refetchInterval: 5_000 });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.connections.list.queryKey() });
  const setPolicies = useMutation(trpc.connections.setPolicies.mutationOptions({ onSettled: refresh }));
  const update = useMutation(trpc.connections.update.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.connections.remove.mutationOptions({ onSettled: refresh }));
  // A change refused is shown on the card of the App it was for, where the admin is looking.
  const errorOf = (id: string) =>
    [setPolicies, update, remove].find((m) => m.error && m.variables?.id === id)?.error ?? null;

  return (
    <div className="stack">
      <AddConnection onAdded={refresh} />
      <ErrorText error={connections.error} />
      {connections.data?.map((c) => (
        <section key={c.id} className="run-card" aria-label={`App ${c.name}`} data-testid="connection">
          <header>
            <span
              className={`status ${c.status === "connected" ? "Completed" : c.status === "failed" ? "Failed" : "Waiting"}`}
            >
              {c.status}
            </span>
            <strong style={{ flex: 1 }}>{c.name}</strong>
            <code className="small">apps.{c.slug}</code>
            <button type="button" onClick={() => update.mutate({ id: c.id, patch: { enabled: !c.enabled } })}>
              {c.enabled ? "Disable" : "Enable"}
            </button>
            <button
              type="button"
              onClick={() => {
                const name = window.prompt(
                  `New name for ${c.name}. Programs call it as apps.${c.slug}: a new name changes that, and programs using the old one stop working.`,
                  c.name,
                );
                if (name && name !== c.name) update.mutate({ id: c.id, patch: { name } });
              }}
            >
              Rename
            </button>
            <button type="button" onClick={() => window.confirm(`Remove ${c.name}?`) && remove.mutate({ id: c.id })}>
              Remove
            </button>
          </header>
          <CardError error={errorOf(c.id)} />
          {c.oauth && (
            <p className="small row" style={{ margin: 0, gap: 8 }} data-testid="connection-oauth">
              <span className="muted">
                OAuth,{" "}
                {c.oauth.mode === "person"
                  ? "each person signs in (an admin signs in to list its tools)"
                  : "one shared sign-in"}
                {c.oauth.needsSignIn ? ": not signed in." : "."}
              </span>
              <ConnectButton
                connectionId={c.id}
                who="shared"
                label={c.oauth.needsSignIn ? "Sign in" : "Sign in again"}
              />
            </p>
          )}
          {c.error && (
            <section className="stack" style={{ gap: 6 }} data-testid="connection-error">
              <p className="error-text small" role="status" style={{ margin: 0 }}>
                {c.error}
              </p>
              <p className="muted small" style={{ margin: 0 }}>
                {triedText(c.transport as Parameters<typeof triedText>[0])} It is retried on its own with a growing
                pause.
              </p>
              {c.enabled && (
                <div>
                  <button
                    type="button"
                    disabled={update.isPending}
                    onClick={async () => {
                      // Reconnect now: stop and start the connection.
                      await update.mutateAsync({ id: c.id, patch: { enabled: false } });
                      await update.mutateAsync({ id: c.id, patch: { enabled: true } });
                    }}
                  >
                    Retry now
                  </button>
                </div>
              )}
            </section>
          )}
          <section className="row small" data-testid="connection-untrusted">
            <label className="check">
              <input
                type="checkbox"
                checked={c.untrustedContent}
                disabled={update.isPending}
                onChange={(e) => update.mutate({ id: c.id, patch: { untrustedContent: e.target.checked } })}
              />{" "}
              Untrusted content: its answers may carry instructions (later writes in a run that read it ask first)
            </label>
            <span className="muted">
              {c.untrustedContentSet === null
                ? `default${c.tools.some((x) => x.untrustedContent) && !c.untrustedContent ? "; open-world tools count as untrusted" : ""}`
                : "set by an admin"}
            </span>
            {c.untrustedContentSet !== null && (
              <button type="button" onClick={() => update.mutate({ id: c.id, patch: { untrustedContent: null } })}>
                Back to default
              </button>
            )}
          </section>
          {c.warnings.length > 0 && (
            <section>
              {c.warnings.map((w) => (
                <p key={w} className="small" style={{ margin: 0, color: "var(--warn)" }}>
                  {w}
                </p>
              ))}
            </section>
          )}
          <section>
            <table className="calls">
              <thead>
                <tr>
                  <th>Binding</th>
                  <th>Description</th>
                  <th>Policy</th>
                </tr>
              </thead>
              <tbody>
                {c.tools.map((t) => (
                  <tr key={t.name}>
                    <td>
                      <code>apps.{t.binding}</code>
                    </td>
                    <td className="muted small">{t.description.slice(0, 160)}</td>
                    <td>
                      <select
                        aria-label={`Policy of ${t.binding}`}
                        value={t.overridden ? t.policy : ""}
                        onChange={(e) =>
                          setPolicies.mutate({ id: c.id, policies: { [t.name]: policyChoice(e.target.value) } })
                        }
                      >
                        <option value="">default ({t.defaultPolicy})</option>
                        <option value="allow">allow</option>
                        <option value="ask">ask</option>
                        <option value="deny">deny</option>
                      </select>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {c.tools.length === 0 && <p className="muted small">No tools.</p>}
          </section>
        </section>
      ))}
    </div>
  );
}

/**
 * Lines of `NAME<sep>value` (environment variables with "=", headers with ":") as a record, or the first
 * line that is not one. Blank lines are skipped; the value is everything after the first separator.
 */
export function parsePairs(text: string, sep: "=" | ":"): { pairs: Record<string, string> } | { problem: string } {
  const pairs: Record<string, string> = {};
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(sep);
    const key = at > 0 ? line.slice(0, at).trim() : "";
    if (!key)
      return { problem: `line ${i + 1} ("${line.slice(0, 40)}") is not ${sep === "=" ? "NAME=value" : "Name: value"}` };
    if (key in pairs) return { problem: `line ${i + 1}: ${key} is given twice` };
    pairs[key] = line.slice(at + 1).trim();
  }
  return { pairs };
}

/** One argument per line (so an argument may hold spaces); blank lines are skipped. */
const argLines = (text: string): string[] => text.split("\n").filter((line) => line.trim() !== "");

/** `{ [field]: pairs }` when parsed pairs are given, else nothing (the transport leaves the field out). */
function given<K extends string>(
  field: K,
  parsed: ReturnType<typeof parsePairs>,
): Partial<Record<K, Record<string, string>>> {
  return "pairs" in parsed && Object.keys(parsed.pairs).length > 0
    ? ({ [field]: parsed.pairs } as Record<K, Record<string, string>>)
    : {};
}

/** A textarea of secret pairs (environment or headers), whose values are stored sealed and shown hidden. */
function PairsField(props: {
  id: string;
  label: string;
  hint: string;
  value: string;
  onChange: (value: string) => void;
  invalid: boolean;
}) {
  return (
    <Field id={props.id} label={props.label} hint={`${props.hint} Values are kept encrypted and never shown again.`}>
      <textarea
        id={props.id}
        rows={2}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={props.invalid ? true : undefined}
        spellCheck={false}
      />
    </Field>
  );
}

/** A preset's own name, used when the Name field is left empty. */
const PRESET_NAMES: Record<string, string> = { everything: "Everything", memory: "Memory", filesystem: "Filesystem" };

function AddConnection({ onAdded }: { onAdded: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<TransportKind>("preset");
  const [preset, setPreset] = useState("everything");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [env, setEnv] = useState("");
  const [url, setUrl] = useState("");
  const [headers, setHeaders] = useState("");
  const [signIn, setSignIn] = useState<"" | "shared" | "person">("");
  const once = useOneAtATime();
  const add = useMutation(
    trpc.connections.create.mutationOptions({
      onSuccess: () => {
        setName("");
        setCommand("");
        setArgs("");
        setEnv("");
        setUrl("");
        setHeaders("");
        onAdded();
      },
    }),
  );
  const envPairs = kind === "stdio" ? parsePairs(env, "=") : { pairs: {} };
  const headerPairs = kind === "http" ? parsePairs(headers, ":") : { pairs: {} };
  const envSet = given("env", envPairs);
  const headerSet = given("headers", headerPairs);
  const transport =
    kind === "preset"
      ? { type: "preset", preset }
      : kind === "stdio"
        ? { type: "stdio", command, args: argLines(args), ...envSet }
        : { type: "http", url, ...headerSet, ...(signIn ? { oauth: { mode: signIn } } : {}) };
  const pairProblem =
    "problem" in envPairs
      ? `Environment: ${envPairs.problem}`
      : "problem" in headerPairs
        ? `Headers: ${headerPairs.problem}`
        : undefined;
  return (
    <form
      className="panel stack"
      aria-label="Add an App"
      onSubmit={(e) => {
        e.preventDefault();
        if (pairProblem) return;
        const named = name.trim() || (kind === "preset" ? (PRESET_NAMES[preset] ?? preset) : "");
        once(() => add.mutateAsync({ name: named, transport }));
      }}
    >
      <h2 style={{ margin: 0, fontSize: 18 }}>Add an App</h2>
      <div className="grid-2">
        <Field
          id="app-name"
          label="Name"
          hint={kind === "preset" ? "Optional for a preset: it has a name." : undefined}
        >
          <input
            id="app-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required={kind !== "preset"}
            placeholder={kind === "preset" ? (PRESET_NAMES[preset] ?? preset) : undefined}
          />
        </Field>
        <Field id="app-kind" label="Kind">
          <select id="app-kind" value={kind} onChange={(e) => setKind(e.target.value as TransportKind)}>
            <option value="preset">Preset (MCP reference server)</option>
            <option value="stdio">Command (stdio)</option>
            <option value="http">URL (Streamable HTTP)</option>
          </select>
        </Field>
        {kind === "preset" && (
          <Field id="app-preset" label="Preset">
            <select id="app-preset" value={preset} onChange={(e) => setPreset(e.target.value)}>
              <option value="everything">everything</option>
              <option value="memory">memory</option>
              <option value="filesystem">filesystem</option>
            </select>
          </Field>
        )}
        {kind === "stdio" && (
          <>
            <Field id="app-command" label="Command">
              <input id="app-command" value={command} onChange={(e) => setCommand(e.target.value)} required />
            </Field>
            <Field id="app-args" label="Arguments" hint="One per line; a line may hold spaces.">
              <textarea id="app-args" rows={2} value={args} onChange={(e) => setArgs(e.target.value)} />
            </Field>
            <PairsField
              id="app-env"
              label="Environment"
              hint="NAME=value, one per line."
              value={env}
              onChange={setEnv}
              invalid={"problem" in envPairs}
            />
          </>
        )}
        {kind === "http" && (
          <Field id="app-url" label="URL">
            <input
              id="app-url"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="http://127.0.0.1:3001/mcp"
              required
            />
          </Field>
        )}
        {kind === "http" && (
          <Field id="app-sign-in" label="Sign-in" hint="OAuth: after adding, sign in from the App's card.">
            <select id="app-sign-in" value={signIn} onChange={(e) => setSignIn(e.target.value as typeof signIn)}>
              <option value="">None (or headers)</option>
              <option value="shared">OAuth, shared (an admin signs in once)</option>
              <option value="person">OAuth, per person (each member signs in)</option>
            </select>
          </Field>
        )}
        {kind === "http" && (
          <PairsField
            id="app-headers"
            label="Headers"
            hint="Name: value, one per line (e.g. Authorization: Bearer …)."
            value={headers}
            onChange={setHeaders}
            invalid={"problem" in headerPairs}
          />
        )}
      </div>
      {pairProblem && (
        <p role="alert" className="error-text">
          {pairProblem}
        </p>
      )}
      <ErrorText error={add.error} />
      <div className="row">
        <button
          className="primary"
          type="submit"
          disabled={add.isPending || pairProblem !== undefined || (kind !== "preset" && !name.trim())}
        >
          {add.isPending ? "Connecting…" : "Add App"}
        </button>
      </div>
    </form>
  );
}

/** The select's value as a policy patch: the empty choice removes the override. */
function policyChoice(value: string): Policy | null {
  return value === "allow" || value === "ask" || value === "deny" ? value : null;
}

/** A change to one App that was refused, shown on that App's card. */
function CardError({ error }: { error: { message: string } | null }) {
  if (!error) return null;
  return (
    <p role="alert" className="error-text small" style={{ margin: 0, padding: "8px 14px" }}>
      {error.message}
    </p>
  );
}
