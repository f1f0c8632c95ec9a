"use client";
import { AdminPage } from "../../_components/admin-page";
import { AppsAdmin } from "../../_components/apps-admin";

export default function AppsPage() {
  return (
    <AdminPage title="Apps">
      <AppsAdmin />
    </AdminPage>
  );
}
