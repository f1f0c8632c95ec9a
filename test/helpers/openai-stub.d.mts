export const STUB_PROGRAM: string;
export const NOTES_PROGRAM: string;
export interface OpenAIStub {
  url: string;
  requests: {
    model: string;
    messages: { role: string; content: unknown }[];
    tools?: { function: { name: string; description: string } }[];
  }[];
  close(): Promise<void>;
}
export function startOpenAIStub(options?: { port?: number; program?: string }): Promise<OpenAIStub>;
