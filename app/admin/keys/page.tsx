"use client";
import { AdminPage } from "../../_components/admin-page";
import { KeysAdmin } from "../../_components/keys-admin";

export default function ApiKeysPage() {
  return (
    <AdminPage title="API keys" maxWidth={820}>
      <KeysAdmin />
    </AdminPage>
  );
}
