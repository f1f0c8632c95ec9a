/**
 * Errors cross module boundaries as data. In the build, the App registry (made in instrumentation) and
 * the services (in each route handler) are separate module graphs; here a second copy of each error
 * module stands in for the other graph: `instanceof` fails across them, the tag guards do not. The log
 * keeps a failure's kind and code locations, never its text.
 */
import { TRPCError } from "@trpc/server";
import { describe, expect, it, vi } from "vitest";
import { type Context, createCallerFactory, createTRPCRouter, publicProcedure } from "@/server/api/trpc";
import * as appErrors from "@/server/apps/errors";
import { describeCause } from "@/server/log";
import * as serviceErrors from "@/server/services/errors";
import * as vault from "@/server/services/vault";

/** The same module loaded again as a separate instance (another module graph). */
async function otherGraph<T>(specifier: string): Promise<T> {
  return (await import(/* @vite-ignore */ `${specifier}?graph=other`)) as T;
}

describe("error guards across module graphs", () => {
  it("AppCallError and ConnectionConfigError from another graph are recognised by their tag", async () => {
    const other = await otherGraph<typeof appErrors>("/server/apps/errors.ts");
    const error = new other.AppCallError("timeout", "late");
    expect(error instanceof appErrors.AppCallError).toBe(false);
    expect(appErrors.isAppCallError(error)).toBe(true);
    expect(appErrors.isAppCallError(new other.ConnectionConfigError("name: bad", "name"))).toBe(false);
    expect(appErrors.isConnectionConfigError(new other.ConnectionConfigError("name: bad", "name"))).toBe(true);
    expect(appErrors.isAppCallError({ kind: "AppCallError", reason: "made-up", message: "x" })).toBe(false);
    expect(appErrors.isAppCallError(new Error("plain"))).toBe(false);
  });

  it("AppError and VaultDeniedError from another graph are recognised by their tag", async () => {
    const otherServices = await otherGraph<typeof serviceErrors>("/server/services/errors.ts");
    const otherVault = await otherGraph<typeof vault>("/server/services/vault.ts");
    const error = new otherServices.AppError("CONFLICT", "stale");
    expect(error instanceof serviceErrors.AppError).toBe(false);
    expect(serviceErrors.isAppError(error)).toBe(true);
    expect(serviceErrors.isAppError({ kind: "AppError", code: "TEAPOT", message: "x" })).toBe(false);
    expect(vault.isVaultDeniedError(new otherVault.VaultDeniedError("no"))).toBe(true);
    expect(vault.isVaultDeniedError(error)).toBe(false);
  });
});

describe("what the log keeps of a cause", () => {
  it("the kind with its reason or code and the code locations, never the message, even one shaped like frames", () => {
    const secret = "sk_live_abc123";
    const cause = new appErrors.AppCallError("tool_error", `The App said: ${secret}\n    at ${secret} (evil.js:1:1)`);
    const logged = JSON.stringify(describeCause(cause));
    expect(logged).not.toContain(secret);
    expect(describeCause(cause).kind).toBe("AppCallError:tool_error");
    expect(describeCause(cause).at?.length).toBeGreaterThan(0);
    const db = Object.assign(new Error(`duplicate key value (token)=(${secret})`), { code: "23505" });
    expect(describeCause(db).kind).toBe("Error:23505");
    expect(JSON.stringify(describeCause(db))).not.toContain(secret);
    expect(describeCause("PROGRAM-SECRET-TEXT")).toEqual({ kind: "string" });
  });
});

describe("tRPC: one visibility rule", () => {
  it("a domain error from another graph keeps its code; any other failure reaches the caller only as a logged error id", async () => {
    const otherServices = await otherGraph<typeof serviceErrors>("/server/services/errors.ts");
    // Paths the access table lists as public, so the access check lets them through to the error mapping.
    const router = createTRPCRouter({
      auth: createTRPCRouter({
        me: publicProcedure.query(() => {
          throw new otherServices.AppError("CONFLICT", "stale version", { currentVersion: 3 });
        }),
        signOut: publicProcedure.query(() => {
          throw new Error("SECRET-CAUSE from deep inside");
        }),
      }),
    });
    const caller = createCallerFactory(router)({} as Context);
    const stale = await caller.auth.me().catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(TRPCError);
    expect(stale).toMatchObject({ code: "CONFLICT", message: "stale version" });

    const written: string[] = [];
    vi.stubEnv("OPENBOT_LOG", "");
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const broken = (await caller.auth.signOut().catch((e: unknown) => e)) as TRPCError;
      expect(broken.code).toBe("INTERNAL_SERVER_ERROR");
      expect(broken.message).not.toContain("SECRET-CAUSE");
      const errorId = /err_[0-9a-f-]+/.exec(broken.message)?.[0];
      expect(errorId).toBeDefined();
      expect(written.join("")).toContain(errorId!);
      expect(written.join("")).not.toContain("SECRET-CAUSE");
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});
