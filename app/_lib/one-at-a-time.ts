"use client";
/**
 * A form's submit that a double click must not send twice. A mutation's `isPending` (which disables the
 * button) is seen only on the next render, so two clicks in one frame both submitted: two people, two
 * connections. A second submit while the first is on its way now does nothing; a failure still shows
 * through the mutation's own `error`.
 */
import { useRef } from "react";

export function useOneAtATime(): (send: () => Promise<unknown>) => void {
  const busy = useRef(false);
  return (send) => {
    if (busy.current) return;
    busy.current = true;
    send()
      .catch(() => undefined)
      .finally(() => {
        busy.current = false;
      });
  };
}
