/**
 * 30 days of generated Work calendar events (6–12 a day) in the shape of the built-in app's
 * `calendar_events` rows, deterministic for a seed. Ids look like the ones create-event gives
 * (`evt_<uuid>`); times are ISO 8601 in UTC like the seed data.
 */
import { rng } from "./random";

export interface BenchEvent {
  id: string;
  day: string;
  title: string;
  start: string;
  end: string;
  attendees: number;
}

const NAMES = ["Priya", "Marco", "Aiko", "Jonas", "Fatima", "Liam", "Sofia", "Wei", "Amara", "Diego", "Hannah", "Ravi"];
const FEATURES = [
  "onboarding flow",
  "billing page",
  "search filters",
  "mobile nav",
  "settings redesign",
  "Code Mode run card",
  "admin audit log",
];
const SYSTEMS = ["search", "payments API", "auth service", "event pipeline", "CDN", "job queue"];
const CUSTOMERS = ["Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Retail"];
const ROLES = ["staff engineer", "product designer", "SRE", "data analyst", "engineering manager"];
const TOPICS = [
  "Postgres internals",
  "prompt caching",
  "accessibility basics",
  "incident command",
  "WebAssembly sandboxes",
];

/** [title, smallest and largest number of attendees, weight]. */
type Template = [(pick: <T>(items: readonly T[]) => T) => string, number, number, number];
const TEMPLATES: Template[] = [
  [() => "Team standup", 5, 9, 10],
  [(p) => `1:1 with ${p(NAMES)}`, 2, 2, 10],
  [(p) => `Design review: ${p(FEATURES)}`, 4, 12, 5],
  [() => "Sprint planning", 7, 14, 3],
  [() => "Sprint retro", 6, 11, 2],
  [(p) => `Customer call: ${p(CUSTOMERS)}`, 3, 8, 5],
  [(p) => `Interview: ${p(ROLES)} candidate`, 2, 4, 4],
  [(p) => `Hiring debrief: ${p(ROLES)}`, 4, 7, 2],
  [(p) => `Incident postmortem: ${p(SYSTEMS)} outage`, 6, 18, 2],
  [(p) => `Architecture review: ${p(SYSTEMS)}`, 5, 16, 3],
  [() => "Engineering all-hands", 35, 80, 1],
  [() => "Company town hall", 90, 160, 1],
  [(p) => `Lunch & learn: ${p(TOPICS)}`, 12, 45, 2],
  [(p) => `Quarterly business review: ${p(CUSTOMERS)}`, 8, 20, 1],
  [() => "Budget sync with finance", 3, 6, 2],
  [() => "Focus time", 1, 1, 4],
  [() => "Product roadmap review", 8, 25, 2],
  [(p) => `Onboarding: welcome ${p(NAMES)}`, 3, 12, 1],
];
const DURATIONS = [15, 25, 30, 30, 45, 50, 60, 60, 90, 120];

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/** `days` consecutive days from `firstDay` (YYYY-MM-DD), each with 6–12 events ordered by start. */
export function generateCalendar(firstDay = "2026-10-23", days = 30, seed = 30): BenchEvent[] {
  const r = rng(seed);
  const totalWeight = TEMPLATES.reduce((s, t) => s + t[3], 0);
  const template = () => {
    let x = r.next() * totalWeight;
    for (const t of TEMPLATES) {
      x -= t[3];
      if (x < 0) return t;
    }
    return TEMPLATES[0] as Template;
  };
  const out: BenchEvent[] = [];
  const first = Date.parse(`${firstDay}T00:00:00Z`);
  for (let d = 0; d < days; d++) {
    const dayStart = first + d * 86_400_000;
    const day = iso(dayStart).slice(0, 10);
    const count = r.int(6, 12);
    // distinct quarter-hour slots between 08:00 and 17:45
    const slots = r
      .sample(
        Array.from({ length: 40 }, (_, i) => 8 * 60 + i * 15),
        count,
      )
      .sort((a, b) => a - b);
    for (const minute of slots) {
      const [title, min, max] = template();
      const start = dayStart + minute * 60_000;
      out.push({
        id: `evt_${r.uuid()}`,
        day,
        title: title(r.pick),
        start: iso(start),
        end: iso(start + r.pick(DURATIONS) * 60_000),
        attendees: r.int(min, max),
      });
    }
  }
  return out;
}

/** Every day of the range, YYYY-MM-DD. */
export function dayList(firstDay = "2026-10-23", days = 30): string[] {
  const first = Date.parse(`${firstDay}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => iso(first + i * 86_400_000).slice(0, 10));
}
