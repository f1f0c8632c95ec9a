/** The seeds' calendar program: two days in parallel, a log line, a filter; four events, two titles. */
export const CALENDAR_PROGRAM: string;
/** The mail program: reads a seeded note and emails it to the team (sending asks for a decision). */
export const NOTES_PROGRAM: string;
