import "server-only";
import { createVaultInput, rotateVaultInput, vaultAccessInput, vaultEntryInput } from "@/contracts/vault";
import { addVaultEntry, listVault, removeVaultEntry, rotateVaultEntry, setVaultAccess } from "../../services/vault";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const vaultRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listVault(ctx)),
  create: publicProcedure.input(createVaultInput).mutation(({ ctx, input }) => addVaultEntry(ctx, input)),
  rotate: publicProcedure.input(rotateVaultInput).mutation(({ ctx, input }) => rotateVaultEntry(ctx, input)),
  /** Who may use the entry: `{ name, usableBy: { users?, roles? } }`. */
  setAccess: publicProcedure.input(vaultAccessInput).mutation(({ ctx, input }) => setVaultAccess(ctx, input)),
  remove: publicProcedure.input(vaultEntryInput).mutation(({ ctx, input }) => removeVaultEntry(ctx, input)),
});
