"use client";
/** Applies the theme saved by the theme switch on every page, including those without the app frame. */
import { useEffect } from "react";

export function SavedTheme() {
  useEffect(() => {
    const saved = localStorage.getItem("openbot-theme");
    if (saved === "light" || saved === "dark") document.documentElement.dataset.theme = saved;
  }, []);
  return null;
}
