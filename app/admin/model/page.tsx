"use client";
import { AdminPage } from "../../_components/admin-page";
import { ModelForm } from "../../_components/model-form";

export default function ModelPage() {
  return (
    <AdminPage title="Model" maxWidth={820}>
      <ModelForm />
    </AdminPage>
  );
}
