"use client";
/**
 * Admin → Vault: named secrets that programs use by reference without seeing them. The secret is
 * write-only: the page lists names, allowed targets and times; rotate replaces a secret in place.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../_lib/trpc";
import { ErrorText, Field } from "./field";

function parseTargets(text: string) {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const [connection = "", tool = ""] = pair.split("/").map((x) => x.trim());
      return { connection, tool };
    });
}

export function VaultAdmin() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const entries = useQuery(trpc.vault.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.vault.list.queryKey() });
  const [name, setName] = useState("");
  const [secret, setSecret] = useState("");
  const [targets, setTargets] = useState("");
  const create = useMutation(
    trpc.vault.create.mutationOptions({
      onSuccess: () => {
        setName("");
        setSecret("");
        setTargets("");
        void refresh();
      },
    }),
  );
  const rotate = useMutation(trpc.vault.rotate.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.vault.remove.mutationOptions({ onSettled: refresh }));
  return (
    <div className="stack">
      <form
        className="panel stack"
        aria-label="Add a secret"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ name, secret, allow: parseTargets(targets) });
        }}
      >
        <h2 style={{ margin: 0, fontSize: 18 }}>Add a secret</h2>
        <div className="grid-2">
          <Field id="vault-name" label="Name" hint="Programs see it as vault.github.token — a reference, never the secret.">
            <input id="vault-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="github/token" required />
          </Field>
          <Field id="vault-secret" label="Secret">
            <input id="vault-secret" type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} required />
          </Field>
          <Field id="vault-targets" label="Allowed targets" hint="connection/tool pairs, separated by commas (connection slug, name or id; tool name).">
            <input id="vault-targets" value={targets} onChange={(e) => setTargets(e.target.value)} placeholder="everything/echo, github/create-issue" />
          </Field>
        </div>
        <ErrorText error={create.error} />
        <div className="row">
          <button className="primary" type="submit" disabled={create.isPending}>Add secret</button>
        </div>
      </form>
      {(rotate.error ?? remove.error) && <p role="alert" className="error-text">{(rotate.error ?? remove.error)?.message}</p>}
      <table className="calls panel" aria-label="Vault entries">
        <thead>
          <tr><th>Name</th><th>Reference</th><th>Allowed targets</th><th>Updated</th><th /></tr>
        </thead>
        <tbody>
          {entries.data?.map((e) => (
            <tr key={e.name} data-testid="vault-entry">
              <td><code>{e.name}</code></td>
              <td><code>{e.reference}</code></td>
              <td className="small">{e.allow.map((a) => `${a.connection}/${a.tool}`).join(", ") || "—"}</td>
              <td className="small muted">{new Date(e.updatedAt).toLocaleString()}</td>
              <td className="row">
                <button
                  type="button"
                  onClick={() => {
                    const next = window.prompt(`New secret for ${e.name}`);
                    if (next) rotate.mutate({ name: e.name, secret: next });
                  }}
                >
                  Rotate
                </button>
                <button type="button" onClick={() => window.confirm(`Delete ${e.name}?`) && remove.mutate({ name: e.name })}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {entries.data?.length === 0 && <p className="muted">No secrets yet.</p>}
    </div>
  );
}
