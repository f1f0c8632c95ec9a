/** A labelled form control with an optional hint, and the one way forms show a failed request. */
import type { ReactNode } from "react";

export function Field({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && <span className="hint">{hint}</span>}
    </div>
  );
}

export function ErrorText({
  error,
  className = "",
}: {
  error: { message: string } | null | undefined;
  className?: string;
}) {
  return error ? (
    <p role="alert" className={`error-text ${className}`.trim()}>
      {error.message}
    </p>
  ) : null;
}
