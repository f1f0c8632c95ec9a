"use client";
import { AdminPage } from "../../_components/admin-page";
import { GrantsAdmin } from "../../_components/grants-ui";

export default function GrantsPage() {
  return (
    <AdminPage title="Grants" maxWidth={1100}>
      <GrantsAdmin />
    </AdminPage>
  );
}
