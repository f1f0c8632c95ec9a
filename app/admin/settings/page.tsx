"use client";
import { AdminPage } from "../../_components/admin-page";
import { SettingsForm } from "../../_components/settings-form";

export default function SettingsPage() {
  return (
    <AdminPage title="Settings" maxWidth={820}>
      <SettingsForm />
    </AdminPage>
  );
}
