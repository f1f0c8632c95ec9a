import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "./_lib/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: "OpenBot",
  description: "Self-hosted agent chat with Code Mode",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
