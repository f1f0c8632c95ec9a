/**
 * An in-process MCP link: a client transport wired straight to a server transport in this process, for
 * the built-in Apps (no loopback socket, so no connect timeout on a busy event loop). Each message is
 * delivered on a later microtask, as a wire would: neither side runs inside the other's `send`. What the
 * client sends is copied through JSON, so the App never holds our objects; what the App sends (its
 * answers, ~85 % of the bytes) is handed over as it is: a built-in App builds each answer afresh and
 * never touches it once sent, and the client reads it without changing it (the SDK's decoding copies what
 * it changes, the gateway redacts into a copy and stores its JSON text). That copy was 5 % of the
 * main thread's allocations per call. Closing either end closes both.
 */
import "server-only";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

class LinkedTransport implements Transport {
  peer?: LinkedTransport;
  /** `copies`: this end's messages reach the peer as JSON copies (the client's end). */
  constructor(private readonly copies: boolean) {}

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private started = false;
  private closed = false;
  private readonly queue: JSONRPCMessage[] = [];

  async start(): Promise<void> {
    this.started = true;
    for (const message of this.queue.splice(0)) this.deliver(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const peer = this.peer;
    if (this.closed || !peer) throw new Error("The in-process App is closed.");
    peer.receive(this.copies ? (JSON.parse(JSON.stringify(message)) as JSONRPCMessage) : message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const peer = this.peer;
    this.peer = undefined;
    await peer?.close();
    this.onclose?.();
  }

  private receive(message: JSONRPCMessage): void {
    if (this.closed) return;
    if (!this.started) this.queue.push(message);
    else this.deliver(message);
  }

  private deliver(message: JSONRPCMessage): void {
    queueMicrotask(() => {
      if (this.closed) return;
      try {
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }
}

/** A linked pair: give `client` to an SDK Client and `server` to an McpServer's `connect`. */
export function linkedPair(): { client: Transport; server: Transport } {
  const client = new LinkedTransport(true);
  const server = new LinkedTransport(false);
  client.peer = server;
  server.peer = client;
  return { client, server };
}
