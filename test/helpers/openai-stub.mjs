// A small OpenAI-compatible chat-completions server for tests (a stand-in for a model provider, which
// cannot run here). It streams like the real API: with no tool result in the conversation yet it calls
// openbot_run_code with the program it was given; after the tool result it answers with a final text
// that quotes the result. It records every request so tests can read what the model was sent.
import { createServer } from "node:http";
import { CALENDAR_PROGRAM, NOTES_PROGRAM } from "../../contracts/example-programs.mjs";

export { CALENDAR_PROGRAM as STUB_PROGRAM, NOTES_PROGRAM };

/** The answer to a message asking for Markdown: headings, a table, a task list, a code block and a link. */
export const MARKDOWN_ANSWER = [
  "## Meeting summary",
  "",
  "Here is **what matters** this week.",
  "",
  "| Day | Meetings |",
  "| --- | --- |",
  "| Friday | 3 |",
  "| Saturday | 1 |",
  "",
  "- [x] Read the calendar",
  "- [ ] Send the notes",
  "",
  "```js",
  "const total = 3 + 1",
  'console.log("total", total)',
  "```",
  "",
  "<b>raw html stays text</b>",
  "",
  "See [the docs](https://example.com/docs) for more.",
].join("\n");

/** A long answer streamed slowly (for Stop and for a second turn while one runs). */
export const SLOW_WORDS = Array.from({ length: 80 }, (_, i) => `word${i + 1} `);

/** Which program the stub writes for a user message; null: answer with text. */
function programFor(text, calendarProgram) {
  if (/notes/i.test(text)) return { code: NOTES_PROGRAM, reason: "Send the notes to the team" };
  if (/calendar|busy|meeting/i.test(text))
    return { code: calendarProgram, reason: "Find the busy meetings of the two days" };
  return null;
}

export function startOpenAIStub({ port = 0, program = CALENDAR_PROGRAM } = {}) {
  const requests = [];
  let calls = 0;
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "stub-1", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    requests.push(body);
    const id = `chatcmpl-${++calls}`;
    const toolMessage = [...body.messages].reverse().find((m) => m.role === "tool");
    const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
    const hasRunTool = (body.tools ?? []).some((t) => t.function?.name === "openbot_run_code");
    const base = { id, object: "chat.completion.chunk", created: 1792486800, model: body.model };
    const frames = [];
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      const asksTitle = body.messages.some(
        (m) => typeof m.content === "string" && /title for this chat/i.test(m.content),
      );
      res.end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: body.model === "stub-empty" ? "" : asksTitle ? "Stub title: weekly plan" : "OK",
              },
              finish_reason: "stop",
            },
          ],
          usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
        }),
      );
      return;
    }
    const lastIsTool = body.messages.at(-1)?.role === "tool";
    const userText =
      typeof lastUser?.content === "string"
        ? lastUser.content
        : (lastUser?.content ?? []).map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
    const planned =
      hasRunTool && !lastIsTool && !userText.startsWith("[OpenBot]") ? programFor(userText, program) : null;
    if (planned) {
      const args = JSON.stringify(planned);
      frames.push({
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  index: 0,
                  id: `call_${calls}`,
                  type: "function",
                  function: { name: "openbot_run_code", arguments: "" },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      for (let i = 0; i < args.length; i += 40) {
        frames.push({
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 40) } }] },
              finish_reason: null,
            },
          ],
        });
      }
      frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
    } else if (!lastIsTool && /slowly/i.test(userText)) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const word of SLOW_WORDS) {
        if (res.destroyed) return;
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`,
        );
        await new Promise((r) => setTimeout(r, 250));
      }
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
      res.end("data: [DONE]\n\n");
      return;
    } else {
      let text = /markdown/i.test(userText) && !lastIsTool ? MARKDOWN_ANSWER : "Hello from the stub model.";
      if (!lastIsTool && userText.startsWith("[OpenBot]")) {
        text = "The result arrived: all done.";
      } else if (toolMessage) {
        const result = JSON.parse(toolMessage.content);
        text =
          result.status === "completed" && Array.isArray(result.value)
            ? `The busy meetings are: ${result.value.join(", ")}.`
            : result.status === "waiting"
              ? "The program is waiting for your decision."
              : `The program ended with status ${result.status}.`;
      }
      for (const word of text.split(/(?<=[ \n])/))
        frames.push({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
      frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    }
    frames.push({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve({
        url: `http://127.0.0.1:${address.port}/v1`,
        requests,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
