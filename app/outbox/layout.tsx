import type { Metadata } from "next";

export const metadata: Metadata = { title: "Sent mail" };

export default function Layout({ children }: { children: React.ReactNode }) {
  return children;
}
