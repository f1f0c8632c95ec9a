import type { Metadata } from "next";

// A template of its own: the runs page below gets "Code runs · OpenBot" too.
export const metadata: Metadata = { title: { absolute: "Chat · OpenBot", template: "%s · OpenBot" } };

export default function Layout({ children }: { children: React.ReactNode }) {
  return children;
}
