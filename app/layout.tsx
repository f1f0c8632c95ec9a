import type { Metadata } from "next";
import type { ReactNode } from "react";
import { SavedTheme } from "./_components/saved-theme";
import { Providers } from "./_lib/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Chats · OpenBot", template: "%s · OpenBot" },
  description: "Self-hosted agent chat with Code Mode",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body>
        <SavedTheme />
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
