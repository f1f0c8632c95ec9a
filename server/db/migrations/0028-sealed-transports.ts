/**
 * A connection's transport says how the App is reached, and for a command or a URL that may include
 * secrets: environment values, header values (an `Authorization` token), an OAuth client secret, a key in
 * the URL. It is now kept sealed in `transport_enc` (AES-256-GCM, `connections:<id>:transport`), and the
 * plaintext `transport` column keeps only its type. Rows written before this are sealed when the App
 * registry starts (it holds the key; SQL does not), so no secret stays readable in the database.
 */
import "server-only";
export const sql = "alter table connections add column transport_enc text";
