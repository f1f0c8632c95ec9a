"use client";
/**
 * Admin → People: people and their API keys. Each person is listed with their role (changed in place) and
 * Remove; each key with Revoke. Both are confirmed first, and a refusal is shown on the row. A new key's
 * token is shown once; only its hash is stored.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { ApiKeyView, Role, UserView } from "@/contracts/people";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { useOneAtATime } from "../_lib/one-at-a-time";
import { useTRPC } from "../_lib/trpc";
import { CopyButton } from "./copy-button";
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
  const onceUser = useOneAtATime();
  const onceKey = useOneAtATime();
  const addUser = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: ({ id }) => {
        setPersonName("");
        setUserId(id);
        void queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
      },
    }),
  );
  const addKey = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: (k) => {
        setToken(k.token);
        setKeyName("");
        void queryClient.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
      },
    }),
  );
  return (
    <div className="stack">
      <section className="panel stack" aria-labelledby="people-heading">
        <h2 id="people-heading" style={{ margin: 0, fontSize: 18 }}>
          People
        </h2>
        <ErrorText error={users.error} />
        {users.data && <PeopleTable people={users.data} />}
        <form
          className="stack"
          aria-label="Add a person"
          onSubmit={(e) => {
            e.preventDefault();
            onceUser(() => addUser.mutateAsync({ name: personName, role }));
          }}
        >
          <h3 style={{ margin: 0, fontSize: 15 }}>Add a person</h3>
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
      </section>
      <form
        className="panel stack"
        aria-label="Create an API key"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(null);
          onceKey(() => addKey.mutateAsync({ userId, name: keyName, permissions: perms }));
        }}
      >
        <h2 style={{ margin: 0, fontSize: 18 }}>Create an API key</h2>
        <div className="grid-2">
          <Field id="key-user" label="Person">
            <select id="key-user" value={userId} onChange={(e) => setUserId(e.target.value)} required>
              <option value="">Choose…</option>
              {users.data
                ?.filter((u) => u.removedAt === null)
                .map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name} ({u.role})
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
            Copy this token now; it is not shown again: <code>{token}</code>{" "}
            <CopyButton text={token} label="Copy token" />
          </p>
        )}
        <div className="row">
          <button className="primary" type="submit" disabled={addKey.isPending || !userId}>
            Create key
          </button>
        </div>
      </form>
      <KeysTable />
    </div>
  );
}

/** Everyone, removed people included (records still name them); the signed-in admin's own row has no actions. */
function PeopleTable({ people }: { people: UserView[] }) {
  const trpc = useTRPC();
  const me = useQuery(trpc.auth.me.queryOptions()).data;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: on a narrow window the table scrolls sideways, and a scroll region must be reachable by keyboard
    <table className="calls stacked" aria-label="People" tabIndex={0}>
      <thead>
        <tr>
          <th>Name</th>
          <th>Role</th>
          <th>Added</th>
          <th>Status</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {people.map((p) => (
          <PersonRow key={p.id} person={p} you={p.id === me?.userId} />
        ))}
      </tbody>
    </table>
  );
}

/** One person: their role is changed in place (confirmed when it takes admin away), Remove is confirmed first. */
function PersonRow({ person: p, you }: { person: UserView; you: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
    ]);
  const update = useMutation(trpc.users.update.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.users.remove.mutationOptions({ onSettled: refresh }));
  const error = update.error ?? remove.error;
  const errorId = `person-error-${p.id}`;
  const busy = update.isPending || remove.isPending;
  // The holder of OPENBOT_ADMIN_TOKEN's key cannot be changed while the server is started with it (the server refuses).
  const active = p.removedAt === null && !you && !p.holdsAdminToken;
  const changeRole = (role: Role) => {
    if (role === p.role) return;
    const ask =
      role === "member"
        ? `Make ${p.name} a member? Their keys and sessions lose platform.admin and the vault at once.`
        : `Make ${p.name} an admin? Their existing keys keep the permissions they were created with; create a key with platform.admin for admin work.`;
    if (window.confirm(ask)) {
      remove.reset();
      update.mutate({ id: p.id, role });
    }
  };
  return (
    <>
      <tr data-testid="person">
        <td data-label="Name">
          {p.name}
          {you && <span className="muted"> (you)</span>}
          {p.holdsAdminToken && (
            <span className="muted small" title={ADMIN_TOKEN_NOTE}>
              {" "}
              · holds OPENBOT_ADMIN_TOKEN
            </span>
          )}
        </td>
        <td data-label="Role">
          {active ? (
            <select
              aria-label={`Role of ${p.name}`}
              aria-describedby={error ? errorId : undefined}
              value={p.role}
              disabled={busy}
              onChange={(e) => changeRole(e.target.value as Role)}
            >
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          ) : (
            p.role
          )}
        </td>
        <td className="small muted" style={{ whiteSpace: "nowrap" }} data-label="Added">
          {when(p.createdAt)}
        </td>
        <StatusCell testId="person-status" ended="Removed" at={p.removedAt} />
        <td style={{ whiteSpace: "nowrap" }}>
          {active && (
            <button
              type="button"
              disabled={busy}
              aria-label={`Remove ${p.name}`}
              aria-describedby={error ? errorId : undefined}
              onClick={() => {
                if (
                  window.confirm(
                    `Remove ${p.name}? Their keys are revoked and their running programs and turns stop at once. Their chats and records stay.`,
                  )
                ) {
                  update.reset();
                  remove.mutate({ id: p.id });
                }
              }}
            >
              Remove
            </button>
          )}
        </td>
      </tr>
      {error && <RowError testId="person-error" id={errorId} columns={5} message={error.message} />}
    </>
  );
}

function KeysTable() {
  const trpc = useTRPC();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  return (
    <section className="stack" aria-labelledby="keys-heading">
      <h2 id="keys-heading" style={{ margin: 0, fontSize: 18 }}>
        Keys
      </h2>
      <ErrorText error={keys.error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: on a narrow window the table scrolls sideways, and a scroll region must be reachable by keyboard */}
      <table className="calls panel stacked" aria-label="API keys" tabIndex={0}>
        <thead>
          <tr>
            <th>Person</th>
            <th>Key name</th>
            <th>Permissions</th>
            <th>Created</th>
            <th>Status</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.data?.map((k) => (
            <KeyRow key={k.id} apiKey={k} />
          ))}
        </tbody>
      </table>
      {keys.data?.length === 0 && <p className="muted">No keys yet.</p>}
    </section>
  );
}

/** Why the OPENBOT_ADMIN_TOKEN key and its holder have no actions. */
const ADMIN_TOKEN_NOTE =
  "The server was started with OPENBOT_ADMIN_TOKEN, which names this key. Change or unset it and restart to revoke the key or change its holder.";

const when = (ms: number) => new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

/** One key; a refused Revoke shows its reason in a row right below, and describes the button. */
function KeyRow({ apiKey: k }: { apiKey: ApiKeyView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const revoke = useMutation(
    trpc.apiKeys.revoke.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
    }),
  );
  const errorId = `revoke-error-${k.id}`;
  return (
    <>
      <tr data-testid="api-key">
        <td data-label="Person">
          {k.userName} <span className="muted">({k.role})</span>
        </td>
        <td data-label="Key name">{k.name}</td>
        <td className="small" data-label="Permissions">
          {k.permissions.join(", ") || "none"}
        </td>
        <td className="small muted" style={{ whiteSpace: "nowrap" }} data-label="Created">
          {when(k.createdAt)}
        </td>
        <StatusCell testId="api-key-status" ended="Revoked" at={k.revokedAt} />
        <td style={{ whiteSpace: "nowrap" }}>
          {k.revokedAt === null &&
            (k.fromEnv ? (
              <span className="small muted" data-testid="api-key-from-env" title={ADMIN_TOKEN_NOTE}>
                Set by OPENBOT_ADMIN_TOKEN
              </span>
            ) : (
              <button
                type="button"
                disabled={revoke.isPending}
                aria-label={`Revoke ${k.name} of ${k.userName}`}
                aria-describedby={revoke.error ? errorId : undefined}
                onClick={() =>
                  window.confirm(`Revoke the key ${k.name} of ${k.userName}? It stops working at once.`) &&
                  revoke.mutate({ id: k.id })
                }
              >
                Revoke
              </button>
            ))}
        </td>
      </tr>
      {revoke.error && <RowError testId="api-key-error" id={errorId} columns={6} message={revoke.error.message} />}
    </>
  );
}

/** A person's or a key's status: Active, or how it ended (Removed, Revoked) and when. */
function StatusCell({ testId, ended, at }: { testId: string; ended: string; at: number | null }) {
  return (
    <td className="small" data-testid={testId} data-label="Status">
      {at === null ? (
        "Active"
      ) : (
        <>
          {ended}{" "}
          <span className="muted" style={{ display: "block", whiteSpace: "nowrap" }}>
            {when(at)}
          </span>
        </>
      )}
    </td>
  );
}

/** A refused action, in a row right below its row (`id` describes the row's buttons). */
function RowError({ testId, id, columns, message }: { testId: string; id: string; columns: number; message: string }) {
  return (
    <tr data-testid={testId}>
      <td colSpan={columns}>
        <span id={id} role="alert" className="error-text small">
          {message}
        </span>
      </td>
    </tr>
  );
}
