// Runs the tests' OpenAI-compatible stub model on OPENBOT_STUB_PORT (Playwright starts it beside the app).
import { startOpenAIStub } from "../test/helpers/openai-stub.mjs";

const stub = await startOpenAIStub({ port: Number(process.env.OPENBOT_STUB_PORT ?? 3199) });
console.log(`OpenAI-compatible stub model at ${stub.url}`);
