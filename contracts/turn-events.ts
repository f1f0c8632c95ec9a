/** Live events of a chat's turns, as the server publishes them and the chat page subscribes to them. */
export type TurnStatus = "Running" | "Completed" | "Failed" | "Cancelled";

export type TurnEvent =
  | { type: "turn-start"; turnId: string }
  | { type: "text-delta"; turnId: string; text: string }
  | { type: "tool-call"; turnId: string; toolCallId: string; toolName: string }
  | { type: "run-request"; turnId: string; runId: string; attempt: number }
  | { type: "tool-result"; turnId: string; toolCallId: string }
  | { type: "turn-end"; turnId: string; status: TurnStatus }
  | { type: "chat-title"; turnId: string; title: string };

/** A chat message as the UI shows it. */
export interface ChatMessageView {
  id: string;
  turnId: string | null;
  kind: "model" | "notice";
  role: "user" | "assistant" | "tool" | "notice";
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input?: unknown }[];
  toolResults: { toolCallId: string; toolName: string; output?: unknown; codeRunId: string | null }[];
  /** An assistant answer cut short by Stop: what streamed before it, kept. */
  stopped?: boolean;
  createdAt: number;
}

/** A turn with its messages. */
export interface TurnView {
  id: string;
  chatId: string;
  status: TurnStatus;
  error: string | null;
  messages: ChatMessageView[];
  createdAt: number;
  updatedAt: number;
}
