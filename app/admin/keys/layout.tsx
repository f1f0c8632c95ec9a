import type { Metadata } from "next";

export const metadata: Metadata = { title: "People and API keys" };

export default function Layout({ children }: { children: React.ReactNode }) {
  return children;
}
