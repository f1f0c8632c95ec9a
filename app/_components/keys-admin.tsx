"use client";
/** Admin → API keys: people and their keys. A new key's token is shown once; only its hash is stored. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { useTRPC } from "../_lib/trpc";
import { ErrorText, Field } from "./field";

export function KeysAdmin() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.users.list.queryOptions());
  const [personName, setPersonName] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
  const [userId, setUserId] = useState("");
  const [keyName, setKeyName] = useState("");
  const [perms, setPerms] = useState<Permission[]>(["apps.use", "sessions.read", "sessions.write"]);
  const [token, setToken] = useState<string | null>(null);
  const addUser = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: ({ id }) => {
        setPersonName("");
        setUserId(id);
        void queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
      },
    }),
  );
  const addKey = useMutation(trpc.apiKeys.create.mutationOptions({ onSuccess: (k) => setToken(k.token) }));
  return (
    <div className="stack">
      <form
        className="panel stack"
        aria-label="Add a person"
        onSubmit={(e) => {
          e.preventDefault();
          addUser.mutate({ name: personName, role });
        }}
      >
        <h2 style={{ margin: 0, fontSize: 18 }}>People</h2>
        <ul className="small" style={{ margin: 0 }}>
          {users.data?.map((u) => (
            <li key={u.id}>
              {u.name} <span className="muted">({u.role})</span>
            </li>
          ))}
        </ul>
        <div className="grid-2">
          <Field id="person-name" label="Name">
            <input id="person-name" value={personName} onChange={(e) => setPersonName(e.target.value)} required />
          </Field>
          <Field id="person-role" label="Role">
            <select id="person-role" value={role} onChange={(e) => setRole(e.target.value as typeof role)}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          </Field>
        </div>
        <ErrorText error={addUser.error} />
        <div className="row">
          <button type="submit" disabled={addUser.isPending}>
            Add person
          </button>
        </div>
      </form>
      <form
        className="panel stack"
        aria-label="Create an API key"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(null);
          addKey.mutate({ userId, name: keyName, permissions: perms });
        }}
      >
        <h2 style={{ margin: 0, fontSize: 18 }}>Create an API key</h2>
        <div className="grid-2">
          <Field id="key-user" label="Person">
            <select id="key-user" value={userId} onChange={(e) => setUserId(e.target.value)} required>
              <option value="">Choose…</option>
              {users.data?.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name}
                </option>
              ))}
            </select>
          </Field>
          <Field id="key-name" label="Key name">
            <input id="key-name" value={keyName} onChange={(e) => setKeyName(e.target.value)} required />
          </Field>
        </div>
        <fieldset className="row" style={{ border: 0, padding: 0 }}>
          <legend className="small muted">Permissions</legend>
          {PERMISSIONS.map((p) => (
            <label key={p} className="check">
              <input
                type="checkbox"
                checked={perms.includes(p)}
                onChange={(e) => setPerms(e.target.checked ? [...perms, p] : perms.filter((x) => x !== p))}
              />
              <span className="small">{p}</span>
            </label>
          ))}
        </fieldset>
        <ErrorText error={addKey.error} />
        {token && (
          <p role="status" className="ok-text" data-testid="new-token">
            Copy this token now; it is not shown again: <code>{token}</code>
          </p>
        )}
        <div className="row">
          <button className="primary" type="submit" disabled={addKey.isPending || !userId}>
            Create key
          </button>
        </div>
      </form>
    </div>
  );
}
