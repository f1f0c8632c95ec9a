/**
 * The example programs, in one place: the chat's manual-mode example, the README (a test checks it
 * shows this text), the tests' stub model and the tests. Plain JavaScript so that Node scripts (the
 * stub model) import it as they are; `example-programs.d.mts` types it.
 */

/** The seeds' calendar program: two days in parallel, a log line, a filter; four events, two titles. */
export const CALENDAR_PROGRAM = `const [today, tomorrow] = await Promise.all([
  apps.work_calendar.list_events({ day: "2026-10-23" }),
  apps.work_calendar.list_events({ day: "2026-10-24" }),
])
const busy = [today, tomorrow].flatMap((result) => result.structuredContent.events)
console.log("events", busy.length)
return busy.filter((event) => event.attendees > 10).map((event) => event.title)`;

/** The mail program: reads a seeded note and emails it to the team (sending asks for a decision). */
export const NOTES_PROGRAM = `const note = await apps.notes.read_note({ id: "note_seed_1" })
try {
  const sent = await apps.email.send_email({ to: "team@example.com", subject: note.structuredContent.title, body: note.structuredContent.body })
  return { sent: sent.structuredContent.id }
} catch (error) {
  return { notSent: error.name }
}`;
