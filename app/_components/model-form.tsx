"use client";
/**
 * Admin → Model: the provider, base URL and model of the chat's model, and its API key (write-only:
 * leave it empty to keep the stored one). "Test connection" reports what the endpoint answered.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { MODEL_PROVIDERS, type ModelProvider, type PlatformSettings, sameModelEndpoint } from "@/contracts/settings";
import { useTRPC } from "../_lib/trpc";
import { Field } from "./field";

export function ModelForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.settings.get.queryOptions());
  const [provider, setProvider] = useState<ModelProvider>("openai-compatible");
  const [baseURL, setBaseURL] = useState("");
  const [model, setModel] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [loaded, setLoaded] = useState(false);
  const [notice, setNotice] = useState<{ ok: boolean; warning?: boolean; text: string } | null>(null);

  useEffect(() => {
    if (settings.data && !loaded) {
      const m = settings.data.model;
      if (m) {
        setProvider(m.provider);
        setBaseURL(m.baseURL ?? "");
        setModel(m.model);
      }
      setLoaded(true);
    }
  }, [settings.data, loaded]);

  const onSaved = (next: PlatformSettings, text: string) => {
    queryClient.setQueryData(trpc.settings.get.queryKey(), next);
    void queryClient.invalidateQueries({ queryKey: trpc.chats.mode.queryKey() });
    setApiKey("");
    setNotice({ ok: true, text });
  };
  const save = useMutation(
    trpc.settings.update.mutationOptions({
      onSuccess: (next) =>
        onSaved(
          next,
          next.model ? `Saved (version ${next.version}).` : "The model was removed: chats are in manual mode.",
        ),
      onError: (error) => {
        const details = error.data as { details?: { current?: PlatformSettings } } | undefined;
        if (details?.details?.current) queryClient.setQueryData(trpc.settings.get.queryKey(), details.details.current);
        setNotice({ ok: false, text: error.message });
      },
    }),
  );
  const test = useMutation(
    trpc.settings.testModel.mutationOptions({
      onSuccess: (r) => setNotice({ ok: r.ok, warning: r.warning, text: r.message }),
      onError: (error) => setNotice({ ok: false, text: error.message }),
    }),
  );

  if (settings.error)
    return (
      <p role="alert" className="error-text">
        {settings.error.message}
      </p>
    );
  if (!settings.data) return <p className="muted">Loading…</p>;
  const current = settings.data;
  return (
    <form
      className="panel stack"
      aria-label="Model settings"
      onSubmit={(e) => {
        e.preventDefault();
        setNotice(null);
        save.mutate({
          expectedVersion: current.version,
          model: {
            provider,
            model,
            ...(baseURL.trim() ? { baseURL: baseURL.trim() } : {}),
            ...(apiKey ? { apiKey } : {}),
          },
        });
      }}
    >
      <p className="muted small" style={{ margin: 0 }}>
        {current.model
          ? `Configured: ${current.model.provider} · ${current.model.model}. API key ${current.model.apiKeySet ? "set" : "not set"}.`
          : "No model is configured: chats run in manual mode."}
      </p>
      <div className="grid-2">
        <Field id="provider" label="Provider">
          <select id="provider" value={provider} onChange={(e) => setProvider(e.target.value as ModelProvider)}>
            {MODEL_PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </Field>
        <Field id="model-name" label="Model">
          <input
            id="model-name"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            placeholder="llama3.1, gpt-4o-mini, claude-sonnet-4-5…"
            required
          />
        </Field>
        <Field id="base-url" label="Base URL" hint="Required for openai-compatible; optional otherwise.">
          <input
            id="base-url"
            value={baseURL}
            onChange={(e) => setBaseURL(e.target.value)}
            placeholder="http://127.0.0.1:11434/v1"
          />
        </Field>
        <Field id="api-key" label="API key">
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            placeholder={
              !current.model?.apiKeySet
                ? "optional"
                : sameModelEndpoint(current.model, { provider, baseURL: baseURL.trim() || undefined })
                  ? "stored — leave empty to keep"
                  : "the stored key is for another endpoint: enter one, or saving removes it"
            }
          />
        </Field>
      </div>
      {notice && (
        <p
          role="status"
          className={notice.ok ? "ok-text" : notice.warning ? "warn-text" : "error-text"}
          data-testid="model-notice"
          data-level={notice.ok ? "ok" : notice.warning ? "warning" : "error"}
        >
          {notice.text}
        </p>
      )}
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          Save
        </button>
        <button
          type="button"
          disabled={test.isPending || !model.trim()}
          onClick={() => {
            setNotice(null);
            // The form as it is now, saved or not.
            test.mutate({
              provider,
              model,
              ...(baseURL.trim() ? { baseURL: baseURL.trim() } : {}),
              ...(apiKey ? { apiKey } : {}),
            });
          }}
        >
          {test.isPending ? "Testing…" : "Test connection"}
        </button>
        {current.model && (
          <button type="button" onClick={() => save.mutate({ expectedVersion: current.version, model: null })}>
            Remove model
          </button>
        )}
      </div>
    </form>
  );
}
