/** A run's W3C trace context (server/services/run-trace.ts): every attempt, on any instance, joins one trace. */
import "server-only";
export const sql = `
alter table code_runs add column traceparent text;
`;
