"use client";
import { AdminPage } from "../../_components/admin-page";
import { VaultAdmin } from "../../_components/vault-admin";

export default function VaultPage() {
  return (
    <AdminPage title="Vault" maxWidth={980}>
      <VaultAdmin />
    </AdminPage>
  );
}
