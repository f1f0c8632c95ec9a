"use client";
/**
 * Admin → Vault: named secrets that programs use by reference without seeing them. The secret is
 * write-only: the page lists names, allowed targets, who may use each entry and times; rotate replaces
 * a secret in place. Who may use an entry (roles and/or people; default admins only) also decides who
 * sees its name under `vault` in a program.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useOneAtATime } from "../_lib/one-at-a-time";
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

type Role = "admin" | "member";
interface UsableBy {
  users: string[];
  roles: Role[];
}
interface Person {
  id: string;
  name: string;
  role: string;
  /** A removed person is named in entries that still list them, and offered for none. */
  removedAt: number | null;
}

/** Roles as checkboxes, people as a multiple select: who may use one entry. */
function UsableByFields({
  idPrefix,
  value,
  people,
  onChange,
}: {
  idPrefix: string;
  value: UsableBy;
  people: Person[];
  onChange: (next: UsableBy) => void;
}) {
  const toggleRole = (role: Role, on: boolean) =>
    onChange({ ...value, roles: on ? [...new Set([...value.roles, role])] : value.roles.filter((r) => r !== role) });
  return (
    <fieldset className="stack" style={{ border: 0, padding: 0, margin: 0 }} aria-label="Who may use it">
      <div className="row small">
        <label className="check">
          <input
            type="checkbox"
            checked={value.roles.includes("admin")}
            onChange={(e) => toggleRole("admin", e.target.checked)}
          />{" "}
          Admins
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={value.roles.includes("member")}
            onChange={(e) => toggleRole("member", e.target.checked)}
          />{" "}
          Members
        </label>
      </div>
      <label className="small" htmlFor={`${idPrefix}-people`}>
        People
      </label>
      <select
        id={`${idPrefix}-people`}
        multiple
        value={value.users}
        onChange={(e) => onChange({ ...value, users: [...e.target.selectedOptions].map((o) => o.value) })}
      >
        {people
          .filter((p) => p.removedAt === null)
          .map((p) => (
            <option key={p.id} value={p.id}>
              {p.name} ({p.role})
            </option>
          ))}
      </select>
    </fieldset>
  );
}

const describeUsableBy = (u: UsableBy, people: Person[]) =>
  [
    ...u.roles.map((r) => (r === "admin" ? "Admins" : "Members")),
    ...u.users.map((id) => {
      const person = people.find((p) => p.id === id);
      if (!person) return id;
      return person.removedAt === null ? person.name : `${person.name} (removed)`;
    }),
  ].join(", ") || "nobody";

/** One entry's "May use" cell: the current list, and an editor that saves it. */
function UsableByCell({ name, value, people }: { name: string; value: UsableBy; people: Person[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<UsableBy | null>(null);
  const save = useMutation(
    trpc.vault.setAccess.mutationOptions({
      onSuccess: () => {
        setEditing(null);
        void queryClient.invalidateQueries({ queryKey: trpc.vault.list.queryKey() });
      },
    }),
  );
  if (!editing) {
    return (
      <div className="stack small">
        <span data-testid="vault-usable-by">{describeUsableBy(value, people)}</span>
        <button
          type="button"
          // A removed person is not offered, so the editor starts without them (saving them would be refused).
          onClick={() =>
            setEditing({
              ...value,
              users: value.users.filter((id) => !people.some((p) => p.id === id && p.removedAt !== null)),
            })
          }
          aria-label={`Change who may use ${name}`}
        >
          Change
        </button>
      </div>
    );
  }
  return (
    <form
      className="stack"
      aria-label={`Who may use ${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ name, usableBy: editing });
      }}
    >
      <UsableByFields
        idPrefix={`vault-${name.replace(/\W/g, "-")}`}
        value={editing}
        people={people}
        onChange={setEditing}
      />
      <ErrorText error={save.error} />
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          Save
        </button>
        <button type="button" onClick={() => setEditing(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function VaultAdmin() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const entries = useQuery(trpc.vault.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.vault.list.queryKey() });
  const [name, setName] = useState("");
  const [secret, setSecret] = useState("");
  const [targets, setTargets] = useState("");
  const [usableBy, setUsableBy] = useState<UsableBy>({ users: [], roles: ["admin"] });
  const people = useQuery(trpc.users.list.queryOptions()).data ?? [];
  const once = useOneAtATime();
  const create = useMutation(
    trpc.vault.create.mutationOptions({
      onSuccess: () => {
        setName("");
        setSecret("");
        setTargets("");
        setUsableBy({ users: [], roles: ["admin"] });
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
          once(() => create.mutateAsync({ name, secret, allow: parseTargets(targets), usableBy }));
        }}
      >
        <h2 style={{ margin: 0, fontSize: 18 }}>Add a secret</h2>
        <div className="grid-2">
          <Field
            id="vault-name"
            label="Name"
            hint="Programs see it as vault.github.token — a reference, never the secret."
          >
            <input
              id="vault-name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="github/token"
              required
            />
          </Field>
          <Field id="vault-secret" label="Secret" hint="At least 8 characters.">
            <input
              id="vault-secret"
              type="password"
              autoComplete="off"
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
              required
            />
          </Field>
          <Field
            id="vault-targets"
            label="Allowed targets"
            hint="connection/tool pairs, separated by commas (connection slug, name or id; tool name)."
          >
            <input
              id="vault-targets"
              value={targets}
              onChange={(e) => setTargets(e.target.value)}
              placeholder="everything/echo, github/create-issue"
            />
          </Field>
          <div className="stack">
            <span className="small">Who may use it</span>
            <UsableByFields idPrefix="vault-new" value={usableBy} people={people} onChange={setUsableBy} />
            <span className="small muted">Anyone else does not see its name; default: admins only.</span>
          </div>
        </div>
        <ErrorText error={create.error} />
        <div className="row">
          <button className="primary" type="submit" disabled={create.isPending}>
            Add secret
          </button>
        </div>
      </form>
      {(rotate.error ?? remove.error) && (
        <p role="alert" className="error-text">
          {(rotate.error ?? remove.error)?.message}
        </p>
      )}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: on a narrow window the table scrolls sideways, and a scroll region must be reachable by keyboard */}
      <table className="calls panel stacked" aria-label="Vault entries" tabIndex={0}>
        <thead>
          <tr>
            <th>Name</th>
            <th>Reference</th>
            <th>Allowed targets</th>
            <th>May use</th>
            <th>Updated</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {entries.data?.map((e) => (
            <tr key={e.name} data-testid="vault-entry">
              <td data-label="Name">
                <code>{e.name}</code>
              </td>
              <td data-label="Reference">
                <code>{e.reference}</code>
              </td>
              <td className="small" data-label="Allowed targets">
                {e.allow.map((a) => `${a.connection}/${a.tool}`).join(", ") || "—"}
              </td>
              <td data-label="May use">
                <UsableByCell name={e.name} value={e.usableBy} people={people} />
              </td>
              <td className="small muted" data-label="Updated">
                {new Date(e.updatedAt).toLocaleString()}
              </td>
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
                <button
                  type="button"
                  onClick={() => window.confirm(`Delete ${e.name}?`) && remove.mutate({ name: e.name })}
                >
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
