"use client";
import { AdminPage } from "../../_components/admin-page";
import { KeysAdmin } from "../../_components/keys-admin";

export default function ApiKeysPage() {
  return (
    <AdminPage title="People and API keys" maxWidth={1100}>
      <KeysAdmin />
    </AdminPage>
  );
}
