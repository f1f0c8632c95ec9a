/**
 * A generated catalog of App tools for the token bench: 25 SaaS-like connections with 20 tools each, as
 * ToolEntry objects shaped like the registry's (binding `<app>.<tool>`, MCP description, JSON input schema
 * with 2–8 described properties, output schemas for some tools, annotations). Deterministic for a seed.
 */
import type { ToolEntry } from "@/server/apps/registry";
import { type Rng, rng } from "./random";

type Json = Record<string, unknown>;

interface Noun {
  one: string;
  many: string;
  statuses: string[];
}

const APPS: { name: string; scope: string; nouns: Noun[] }[] = [
  app("GitHub", "repo", [
    "issue/issues:open,closed",
    "pull request/pull requests:open,closed,merged,draft",
    "release/releases:draft,published",
    "workflow run/workflow runs:queued,in_progress,completed,failed",
    "branch/branches:active,stale,protected",
  ]),
  app("Jira", "write:jira-work", [
    "issue/issues:to_do,in_progress,in_review,done",
    "sprint/sprints:future,active,closed",
    "epic/epics:open,done",
    "comment/comments:visible,hidden",
    "board/boards:active,archived",
  ]),
  app("Linear", "issues:write", [
    "issue/issues:backlog,todo,in_progress,done,canceled",
    "project/projects:planned,started,paused,completed",
    "cycle/cycles:upcoming,current,past",
    "label/labels:active,archived",
    "team/teams:active,archived",
  ]),
  app("Slack", "chat:write", [
    "message/messages:sent,edited,deleted",
    "channel/channels:public,private,archived",
    "user group/user groups:enabled,disabled",
    "reminder/reminders:pending,complete",
    "bookmark/bookmarks:active,removed",
  ]),
  app("Salesforce CRM", "api", [
    "account/accounts:prospect,customer,churned",
    "opportunity/opportunities:prospecting,negotiation,closed_won,closed_lost",
    "contact/contacts:active,inactive",
    "lead/leads:new,working,qualified,unqualified",
    "case/cases:new,escalated,closed",
  ]),
  app("HubSpot", "crm.objects.write", [
    "deal/deals:appointment,qualified,contract_sent,closed_won,closed_lost",
    "company/companies:lead,customer,partner",
    "ticket/tickets:new,waiting,closed",
    "email campaign/email campaigns:draft,scheduled,sent",
    "form/forms:published,draft",
  ]),
  app("Zendesk", "tickets:write", [
    "ticket/tickets:new,open,pending,solved,closed",
    "macro/macros:active,inactive",
    "organization/organizations:active,suspended",
    "satisfaction rating/satisfaction ratings:good,bad,offered",
    "article/articles:draft,published,archived",
  ]),
  app("Stripe billing", "billing_write", [
    "invoice/invoices:draft,open,paid,uncollectible,void",
    "subscription/subscriptions:trialing,active,past_due,canceled",
    "customer/customers:active,delinquent",
    "refund/refunds:pending,succeeded,failed",
    "price/prices:active,inactive",
  ]),
  app("Google Drive", "drive.file", [
    "file/files:active,trashed",
    "folder/folders:active,trashed",
    "permission/permissions:reader,commenter,writer,owner",
    "revision/revisions:kept,auto",
    "shared drive/shared drives:active,hidden",
  ]),
  app("Confluence", "write:confluence-content", [
    "page/pages:current,draft,archived",
    "space/spaces:current,archived",
    "blog post/blog posts:current,draft",
    "attachment/attachments:current,archived",
    "page comment/page comments:open,resolved",
  ]),
  app("Notion", "content:write", [
    "page/pages:active,archived",
    "database/databases:active,archived",
    "database row/database rows:not_started,in_progress,done",
    "block/blocks:active,archived",
    "comment/comments:open,resolved",
  ]),
  app("Postgres analytics", "analytics:read", [
    "saved query/saved queries:private,shared",
    "dashboard/dashboards:draft,published",
    "table/tables:active,deprecated",
    "query run/query runs:queued,running,succeeded,failed",
    "alert/alerts:ok,triggered,muted",
  ]),
  app("Datadog", "monitors_write", [
    "monitor/monitors:ok,warn,alert,no_data",
    "dashboard/dashboards:active,deleted",
    "incident/incidents:active,stable,resolved",
    "SLO/SLOs:ok,breached",
    "log pipeline/log pipelines:enabled,disabled",
  ]),
  app("PagerDuty", "write", [
    "incident/incidents:triggered,acknowledged,resolved",
    "schedule/schedules:active,archived",
    "escalation policy/escalation policies:active,archived",
    "service/services:active,warning,critical,maintenance,disabled",
    "on-call shift/on-call shifts:upcoming,current,past",
  ]),
  app("AWS S3", "s3:PutObject", [
    "bucket/buckets:active,suspended",
    "object/objects:standard,glacier,deleted",
    "lifecycle rule/lifecycle rules:enabled,disabled",
    "access point/access points:active,pending",
    "multipart upload/multipart uploads:in_progress,completed,aborted",
  ]),
  app("Kubernetes", "cluster-admin", [
    "deployment/deployments:available,progressing,failed",
    "pod/pods:pending,running,succeeded,failed,unknown",
    "service/services:active,terminating",
    "config map/config maps:active,immutable",
    "cron job/cron jobs:active,suspended",
  ]),
  app("Shopify", "write_orders", [
    "order/orders:open,closed,cancelled",
    "product/products:active,draft,archived",
    "customer/customers:enabled,disabled,invited",
    "discount/discounts:active,scheduled,expired",
    "fulfillment/fulfillments:pending,open,success,cancelled",
  ]),
  app("Twilio", "messaging", [
    "SMS message/SMS messages:queued,sent,delivered,failed",
    "call/calls:queued,ringing,in-progress,completed,busy",
    "phone number/phone numbers:active,released",
    "conversation/conversations:active,inactive,closed",
    "verification/verifications:pending,approved,canceled",
  ]),
  app("SendGrid", "mail.send", [
    "email template/email templates:active,legacy",
    "contact list/contact lists:active,archived",
    "single send/single sends:draft,scheduled,triggered",
    "suppression/suppressions:bounce,block,spam_report,unsubscribe",
    "sender identity/sender identities:verified,pending",
  ]),
  app("Calendly", "scheduling", [
    "scheduled event/scheduled events:active,canceled",
    "event type/event types:active,secret,inactive",
    "invitee/invitees:active,canceled,no_show",
    "routing form/routing forms:published,draft",
    "availability schedule/availability schedules:default,custom",
  ]),
  app("Asana", "default", [
    "task/tasks:incomplete,completed",
    "project/projects:on_track,at_risk,off_track,complete",
    "section/sections:active,archived",
    "portfolio/portfolios:active,archived",
    "goal/goals:on_track,at_risk,missed,achieved",
  ]),
  app("Figma", "file_content:read", [
    "file/files:active,archived",
    "component/components:published,unpublished",
    "comment/comments:open,resolved",
    "project/projects:active,archived",
    "dev resource/dev resources:linked,broken",
  ]),
  app("Airtable", "data.records:write", [
    "record/records:active,deleted",
    "base/bases:active,archived",
    "table/tables:active,archived",
    "view/views:grid,kanban,calendar,gallery",
    "webhook/webhooks:enabled,disabled",
  ]),
  app("QuickBooks", "com.intuit.quickbooks.accounting", [
    "invoice/invoices:draft,sent,paid,overdue,voided",
    "bill/bills:open,paid,overdue",
    "vendor/vendors:active,inactive",
    "journal entry/journal entries:posted,draft",
    "expense/expenses:pending,approved,reimbursed",
  ]),
  app("Workday HR", "staffing", [
    "worker/workers:active,on_leave,terminated",
    "time off request/time off requests:submitted,approved,denied,canceled",
    "job requisition/job requisitions:open,filled,closed",
    "position/positions:filled,vacant,frozen",
    "review/reviews:not_started,in_progress,completed",
  ]),
];

function app(name: string, scope: string, nouns: string[]): { name: string; scope: string; nouns: Noun[] } {
  return {
    name,
    scope,
    nouns: nouns.map((n) => {
      const [words = "", statuses = ""] = n.split(":");
      const [one = "", many = ""] = words.split("/");
      return { one, many, statuses: statuses.split(",") };
    }),
  };
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const VERBS = ["list", "get", "create", "update", "delete", "search"] as const;
type Verb = (typeof VERBS)[number];

const PEOPLE = ["user id or email", "account id", "member handle"];
const NOTES = [
  "Dates are ISO 8601 strings in UTC.",
  "Results are paginated: pass next_cursor from the previous response to get the next page.",
  "Rate limited to 100 requests per minute per workspace; on HTTP 429 wait and retry.",
  "Only items the connected account can see are returned.",
  "Deleted items stay recoverable for 30 days from the trash.",
  "Custom fields are returned under `custom_fields`, keyed by their API name.",
  "Archived items are skipped unless include_archived is true.",
  "The caller needs admin rights in the workspace for this operation.",
];

function descriptionFor(r: Rng, appName: string, scope: string, verb: Verb, n: Noun): string {
  const main: Record<Verb, string[]> = {
    list: [
      `Lists ${n.many} in ${appName}, newest first, optionally filtered by status, owner and date range.`,
      `Returns a page of ${n.many} from ${appName} that match the given filters.`,
    ],
    get: [
      `Gets one ${n.one} by its id, with all of its fields.`,
      `Fetches the full details of a single ${n.one} in ${appName}.`,
    ],
    create: [
      `Creates a new ${n.one} in ${appName} and returns its id and URL.`,
      `Adds a ${n.one} to ${appName}. Returns the created ${n.one}.`,
    ],
    update: [
      `Updates fields of an existing ${n.one}. Only the fields you pass are changed; omitted fields keep their values.`,
      `Changes a ${n.one} in ${appName}: status, owner, title or other fields.`,
    ],
    delete: [
      `Deletes a ${n.one} from ${appName}. This cannot be undone unless the workspace keeps a trash.`,
      `Permanently removes a ${n.one}.`,
    ],
    search: [
      `Full-text search over ${n.many} in ${appName} (titles, descriptions and comments). Supports quoted phrases and field:value filters.`,
      `Searches ${n.many} by keyword and returns the best matches with a short snippet each.`,
    ],
  };
  const parts = [r.pick(main[verb])];
  if (r.chance(0.6)) parts.push(r.pick(NOTES));
  if (verb !== "list" && verb !== "get" && verb !== "search" && r.chance(0.5))
    parts.push(`Requires the \`${scope}\` scope.`);
  return parts.join(" ");
}

function statusProp(n: Noun, what: string): Json {
  return { type: "string", enum: n.statuses, description: `${cap(what)} status of the ${n.one}` };
}

/** Candidate input properties for a verb: [name, schema, required?]. */
function candidates(r: Rng, verb: Verb, n: Noun): [string, Json, boolean][] {
  const id = `${slug(n.one)}_id`;
  const idProp: Json = {
    type: "string",
    minLength: 1,
    description: `The ${n.one}'s id, as returned by list or search`,
  };
  const filters: [string, Json, boolean][] = [
    ["status", statusProp(n, "only items with this"), false],
    ["owner", { type: "string", description: `Only ${n.many} owned by this ${r.pick(PEOPLE)}` }, false],
    [
      "created_after",
      { type: "string", format: "date-time", description: "Only items created at or after this time (ISO 8601)" },
      false,
    ],
    [
      "updated_before",
      { type: "string", format: "date-time", description: "Only items last updated before this time (ISO 8601)" },
      false,
    ],
    [
      "labels",
      { type: "array", items: { type: "string" }, description: "Only items carrying all of these labels" },
      false,
    ],
    ["include_archived", { type: "boolean", default: false, description: "Also return archived items" }, false],
    [
      "sort",
      {
        type: "string",
        enum: ["created_at", "updated_at", "title", "priority"],
        default: "created_at",
        description: "Field to sort by",
      },
      false,
    ],
    ["order", { type: "string", enum: ["asc", "desc"], default: "desc", description: "Sort order" }, false],
  ];
  const paging: [string, Json, boolean][] = [
    [
      "limit",
      {
        type: "integer",
        minimum: 1,
        maximum: 100,
        default: 25,
        description: "Maximum number of items to return (1-100)",
      },
      false,
    ],
    ["cursor", { type: "string", description: "Opaque cursor from a previous response's next_cursor" }, false],
  ];
  const fields: [string, Json, boolean][] = [
    [
      "description",
      { type: "string", maxLength: 10000, description: "Longer description; Markdown is supported" },
      false,
    ],
    ["owner", { type: "string", description: `New owner: a ${r.pick(PEOPLE)}` }, false],
    ["due_date", { type: "string", format: "date", description: "Due date as YYYY-MM-DD" }, false],
    ["priority", { type: "string", enum: ["urgent", "high", "medium", "low", "none"], description: "Priority" }, false],
    [
      "labels",
      {
        type: "array",
        items: { type: "string" },
        maxItems: 20,
        description: "Labels to set (replaces existing labels)",
      },
      false,
    ],
    [
      "custom_fields",
      {
        type: "object",
        additionalProperties: { type: ["string", "number", "boolean", "null"] },
        description: "Custom field values keyed by API name",
      },
      false,
    ],
    ["notify", { type: "boolean", default: true, description: "Send notifications to watchers" }, false],
  ];
  switch (verb) {
    case "list":
      return [...r.sample([...filters, ...paging], 8)];
    case "search":
      return [
        [
          "query",
          {
            type: "string",
            minLength: 1,
            maxLength: 500,
            description: "Search words; quote phrases, use field:value to filter",
          },
          true,
        ],
        ...r.sample([...filters.slice(0, 5), ...paging], 7),
      ];
    case "get":
      return [
        [id, idProp, true],
        [
          "include",
          {
            type: "array",
            items: { type: "string", enum: ["comments", "attachments", "history", "watchers", "links"] },
            description: "Related data to include",
          },
          false,
        ],
        [
          "fields",
          { type: "array", items: { type: "string" }, description: "Only return these fields (default: all)" },
          false,
        ],
        [
          "expand_users",
          { type: "boolean", default: false, description: "Replace user ids with name and email" },
          false,
        ],
      ];
    case "create":
      return [
        ["title", { type: "string", minLength: 1, maxLength: 255, description: `Title of the ${n.one}` }, true],
        ["status", statusProp(n, "initial"), false],
        ["parent_id", { type: "string", description: "Id of the parent item, if any" }, false],
        ...r.sample(fields, 6),
      ];
    case "update":
      return [
        [id, idProp, true],
        ["title", { type: "string", minLength: 1, maxLength: 255, description: "New title" }, false],
        ["status", statusProp(n, "new"), false],
        ...r.sample(fields, 5),
      ];
    case "delete":
      return [
        [id, idProp, true],
        ["reason", { type: "string", maxLength: 500, description: "Why it is deleted (kept in the audit log)" }, false],
        ["force", { type: "boolean", default: false, description: "Delete even if other items depend on it" }, false],
        ["dry_run", { type: "boolean", default: false, description: "Only report what would be deleted" }, false],
      ];
  }
}

function inputSchema(r: Rng, verb: Verb, n: Noun): Json {
  const all = candidates(r, verb, n);
  const required = all.filter(([, , req]) => req);
  const optional = all.filter(([, , req]) => !req);
  const count = Math.max(2, Math.min(8, r.int(2, 8), all.length));
  const chosen = [...required, ...optional.slice(0, Math.max(0, count - required.length))];
  return {
    type: "object",
    properties: Object.fromEntries(chosen.map(([name, schema]) => [name, schema])),
    ...(required.length ? { required: required.map(([name]) => name) } : {}),
    additionalProperties: false,
  };
}

function itemSchema(r: Rng, n: Noun): Json {
  const extra: [string, Json][] = r.sample(
    [
      ["owner", { type: "string" }],
      ["priority", { type: "string", enum: ["urgent", "high", "medium", "low", "none"] }],
      ["labels", { type: "array", items: { type: "string" } }],
      ["due_date", { type: ["string", "null"] }],
      ["amount", { type: "number", description: "In the account's currency" }],
      ["comment_count", { type: "integer" }],
    ] as [string, Json][],
    r.int(1, 3),
  );
  return {
    type: "object",
    properties: {
      id: { type: "string" },
      title: { type: "string" },
      status: { type: "string", enum: n.statuses },
      url: { type: "string" },
      created_at: { type: "string" },
      updated_at: { type: "string" },
      ...Object.fromEntries(extra),
    },
    required: ["id", "title", "status"],
  };
}

function outputSchema(r: Rng, verb: Verb, n: Noun): Json | undefined {
  if (verb === "get" && r.chance(0.5)) return itemSchema(r, n);
  if ((verb === "list" || verb === "search") && r.chance(0.5)) {
    return {
      type: "object",
      properties: {
        items: { type: "array", items: itemSchema(r, n) },
        next_cursor: { type: ["string", "null"] },
        total: { type: "integer" },
      },
      required: ["items"],
    };
  }
  if ((verb === "create" || verb === "update") && r.chance(0.3)) {
    return { type: "object", properties: { id: { type: "string" }, url: { type: "string" } }, required: ["id"] };
  }
  return undefined;
}

/** `count` tools (at most 500: 25 apps × 5 nouns × 4 verbs), deterministic for `seed`. */
export function syntheticCatalog(count = 500, seed = 20261023): ToolEntry[] {
  const r = rng(seed);
  const out: ToolEntry[] = [];
  for (const a of APPS) {
    const connSlug = slug(a.name);
    for (const n of a.nouns) {
      const verbs = r.sample(VERBS, 4);
      for (const verb of verbs) {
        const name = `${verb}_${slug(verb === "list" || verb === "search" ? n.many : n.one)}`;
        const readOnly = verb === "list" || verb === "get" || verb === "search";
        const output = outputSchema(r, verb, n);
        out.push({
          connectionId: `conn_${connSlug}`,
          connectionName: a.name,
          connectionSlug: connSlug,
          name,
          binding: `${connSlug}.${name}`,
          kind: "tool",
          title: `${cap(verb)} ${verb === "list" || verb === "search" ? n.many : n.one}`,
          description: descriptionFor(r, a.name, a.scope, verb, n),
          inputSchema: inputSchema(r, verb, n),
          ...(output ? { outputSchema: output } : {}),
          annotations: { readOnlyHint: readOnly, destructiveHint: verb === "delete", openWorldHint: true },
          policy: readOnly ? "allow" : "ask",
          defaultPolicy: readOnly ? "allow" : "ask",
        });
      }
    }
  }
  return out.slice(0, count);
}
