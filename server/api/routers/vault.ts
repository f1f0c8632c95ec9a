import "server-only";
import { z } from "zod";
import { addVaultEntry, listVault, removeVaultEntry, rotateVaultEntry, setVaultAccess } from "../../services/vault";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const vaultRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listVault(ctx.platform, ctx.principal)),
  create: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => addVaultEntry(ctx.platform, ctx.principal, input)),
  rotate: publicProcedure
    .input(
      z.object({
        name: z.string(),
        secret: z.unknown(),
        allow: z.unknown().optional(),
        usableBy: z.unknown().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      rotateVaultEntry(ctx.platform, ctx.principal, input.name, {
        secret: input.secret,
        allow: input.allow,
        usableBy: input.usableBy,
      }),
    ),
  /** Who may use the entry: `{ name, usableBy: { users?, roles? } }`. */
  setAccess: publicProcedure
    .input(z.object({ name: z.string(), usableBy: z.unknown() }))
    .mutation(({ ctx, input }) =>
      setVaultAccess(ctx.platform, ctx.principal, input.name, { usableBy: input.usableBy }),
    ),
  remove: publicProcedure
    .input(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => removeVaultEntry(ctx.platform, ctx.principal, input.name)),
});
