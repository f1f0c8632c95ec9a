"use client";
/** Sign in with an API token; the server answers with an httpOnly session cookie. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../_lib/trpc";
import { ErrorText, Field } from "./field";

export function SignInForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [token, setToken] = useState("");
  const signIn = useMutation(trpc.auth.signIn.mutationOptions({ onSuccess: () => queryClient.invalidateQueries() }));
  return (
    <main className="main" style={{ maxWidth: 480 }}>
      <form
        className="panel stack"
        onSubmit={(e) => {
          e.preventDefault();
          signIn.mutate({ token });
        }}
      >
        <h1 style={{ margin: 0 }}>Sign in to OpenBot</h1>
        <p className="muted small" style={{ margin: 0 }}>
          Use an API token. On first start the server printed an admin token and saved it to
          <code> &lt;data dir&gt;/admin-token</code>.
        </p>
        <Field id="token" label="Token">
          <input
            id="token"
            name="token"
            type="password"
            autoComplete="current-password"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            required
          />
        </Field>
        <ErrorText error={signIn.error} />
        <button className="primary" type="submit" disabled={signIn.isPending || !token.trim()}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
