"use client";
/**
 * Sandbox lab: runs a program in this page's Web Worker against answers given up front, without any
 * server. It lets a person try the engine, and lets the browser tests drive the very same worker the
 * chat uses (window.openbotLab.run) to compare it with the Node worker thread.
 */
import { useEffect, useState } from "react";
import type { CallOutcome, CallRequest, HostCallAnswer, RunInput, RunOutcome } from "@/contracts/engine";
import { DEFAULT_CODE_MODE } from "@/contracts/settings";
import { spawnBrowserWorker } from "@/worker/browser-port";
import { canonicalJson } from "@/worker/canonical-json";
import { SandboxSupervisor } from "@/worker/supervisor";

export interface LabResult {
  outcome: RunOutcome & { completionOrder?: number[] };
  calls: CallRequest[];
}

/** Answers keyed by `binding canonicalArgs`; demo.echo echoes; anything else missing answers AppCallFailed. */
export type LabAnswers = Record<string, CallOutcome>;

declare global {
  interface Window {
    openbotLab?: { run(input: RunInput, answers: LabAnswers): Promise<LabResult> };
  }
}

let supervisor: SandboxSupervisor | undefined;

async function labRun(input: RunInput, answers: LabAnswers): Promise<LabResult> {
  supervisor ??= new SandboxSupervisor({ spawn: spawnBrowserWorker });
  const calls: CallRequest[] = [];
  const outcome = await supervisor.run(input, {
    call: async (req): Promise<HostCallAnswer> => {
      calls.push(req);
      const key = `${req.binding} ${canonicalJson(req.argsJson)}`;
      const given = answers[key];
      if (given) return given;
      if (req.binding === "demo.echo") {
        const text = String((JSON.parse(req.argsJson) as { text?: unknown }).text ?? "");
        return {
          type: "ok",
          resultJson: JSON.stringify({ content: [{ type: "text", text }], structuredContent: { text } }),
        };
      }
      return {
        type: "error",
        name: "AppCallFailed",
        message: `no answer for ${key}`,
        details: { reason: "unavailable" },
      };
    },
  });
  return { outcome, calls };
}

export default function SandboxLab() {
  const [code, setCode] = useState(
    'const r = await apps.demo.echo({ text: "hi" })\nconsole.log("got", r.structuredContent.text)\nreturn { answer: r.structuredContent.text, at: Date.now(), r: Math.random() }',
  );
  const [result, setResult] = useState<LabResult | null>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    window.openbotLab = { run: labRun };
    setReady(true);
  }, []);
  return (
    <main className="main stack" style={{ maxWidth: 900 }}>
      <h1 style={{ margin: 0 }}>Sandbox lab</h1>
      <p className="muted small" style={{ margin: 0 }}>
        Runs in this page&apos;s worker with one App, <code>apps.demo.echo({"{ text }"})</code>, answered here; nothing
        reaches the server.
      </p>
      <textarea aria-label="Lab program" className="code" value={code} onChange={(e) => setCode(e.target.value)} />
      <div className="row">
        <button
          className="primary"
          type="button"
          disabled={!ready}
          data-testid="lab-ready"
          onClick={async () => {
            const input: RunInput = {
              code,
              time: 1792486800000,
              seed: 7,
              limits: DEFAULT_CODE_MODE,
              bindings: ["demo.echo"],
              vaultNames: [],
            };
            setResult(await labRun(input, {}));
          }}
        >
          Run
        </button>
      </div>
      {result && <pre data-testid="lab-result">{JSON.stringify(result.outcome, null, 2)}</pre>}
    </main>
  );
}
