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
