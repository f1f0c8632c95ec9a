/**
 * The bytes of a prepared statement's use on PGlite (pglite-prepared.ts), written and read here instead of
 * by PGlite's protocol layer. Its `execProtocol` copies each reply twice, parses every message into an
 * object and decodes each column through a copied ArrayBuffer and a TextDecoder; its serializer grows its
 * buffer by copies for a large parameter (a batch's JSON). Here the Bind, Execute and Sync are one buffer
 * sized once, and a reply is read in place: each row's columns go straight from the bytes through PGlite's
 * own type parsers into the row object. Measured on the database thread under bench:load: the protocol
 * parsing was ~12 % of its CPU and the serializing ~7 %.
 * An error reply is handed back whole (PGlite's parser turns it into the same DatabaseError as before);
 * NOTIFY payloads met in a reply are returned for the caller to deliver.
 */
import "server-only";

/** One parameter in text format, or SQL NULL. */
export type WireValue = string | null;

const FRAME = 5; // type byte + int32 length

/** Bind (unnamed portal, every parameter and column in text format), Execute (all rows) and Sync. */
export function bindExecuteSync(statement: string, values: readonly WireValue[]): Buffer {
  const nameBytes = Buffer.byteLength(statement);
  let valueBytes = 0;
  const lengths = values.map((v) => {
    const n = v === null ? -1 : Buffer.byteLength(v);
    valueBytes += 4 + Math.max(n, 0);
    return n;
  });
  // Bind body: portal "\0", statement "\0", 0 format codes (all text), count, values, 0 result codes (all text).
  const bindBody = 4 + 1 + nameBytes + 1 + 2 + 2 + valueBytes + 2;
  const out = Buffer.allocUnsafe(1 + bindBody + 10 + 5);
  let o = 0;
  out[o++] = 0x42; // 'B'
  out.writeInt32BE(bindBody, o);
  o += 4;
  out[o++] = 0;
  o += out.write(statement, o, "utf8");
  out[o++] = 0;
  out.writeInt16BE(0, o);
  o += 2;
  out.writeInt16BE(values.length, o);
  o += 2;
  for (const [i, v] of values.entries()) {
    const n = lengths[i] as number;
    out.writeInt32BE(n, o);
    o += 4;
    if (v !== null) o += out.write(v, o, "utf8");
  }
  out.writeInt16BE(0, o);
  o += 2;
  out[o++] = 0x45; // 'E': unnamed portal, no row limit
  out.writeInt32BE(9, o);
  o += 4;
  out[o++] = 0;
  out.writeInt32BE(0, o);
  o += 4;
  out[o++] = 0x53; // 'S'
  out.writeInt32BE(4, o);
  return out;
}

/** A prepared statement's columns: names and type OIDs, from its RowDescription. */
export interface Columns {
  names: string[];
  types: number[];
}

export type TypeParsers = Record<number, ((text: string, type: number) => unknown) | undefined>;

/** What a reply held: its rows, whether an ErrorResponse is in it, and the NOTIFY payloads it carried. */
export interface Reply {
  rows: Record<string, unknown>[];
  failed: boolean;
  notifications: { channel: string; payload: string }[];
}

const cstringEnd = (data: Buffer, from: number) => {
  const end = data.indexOf(0, from);
  return end < 0 ? data.length : end;
};

/** Reads `data[0, length)`, the backend's messages for one Bind/Execute/Sync. */
export function readReply(data: Buffer, length: number, columns: Columns | null, parsers: TypeParsers): Reply {
  const rows: Record<string, unknown>[] = [];
  const notifications: Reply["notifications"] = [];
  let failed = false;
  let o = 0;
  while (o + FRAME <= length) {
    const type = data[o];
    const end = o + 1 + data.readInt32BE(o + 1);
    let p = o + FRAME;
    if (type === 0x44 && columns && !failed) {
      // DataRow: int16 count, then per column int32 length (-1: NULL) and its text.
      const count = data.readInt16BE(p);
      p += 2;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const n = data.readInt32BE(p);
        p += 4;
        let value: unknown = null;
        if (n >= 0) {
          const text = data.toString("utf8", p, p + n);
          p += n;
          const type = columns.types[i] as number;
          const parse = parsers[type];
          value = parse ? parse(text, type) : text;
        }
        row[columns.names[i] as string] = value;
      }
      rows.push(row);
    } else if (type === 0x45) {
      failed = true;
    } else if (type === 0x41) {
      // NotificationResponse: int32 sender, channel, payload.
      const channelEnd = cstringEnd(data, p + 4);
      const payloadEnd = cstringEnd(data, channelEnd + 1);
      notifications.push({
        channel: data.toString("utf8", p + 4, channelEnd),
        payload: data.toString("utf8", channelEnd + 1, payloadEnd),
      });
    }
    o = end;
  }
  return { rows, failed, notifications };
}

/** A growing buffer the reply's chunks are copied into (they are views of the engine's memory). */
export function replyBuffer(initial = 64 * 1024) {
  let data = Buffer.allocUnsafe(initial);
  let length = 0;
  return {
    reset() {
      length = 0;
      // One very large reply does not keep its buffer for good.
      if (data.length > 16 * initial) data = Buffer.allocUnsafe(initial);
    },
    append(chunk: Uint8Array) {
      if (length + chunk.length > data.length) {
        const grown = Buffer.allocUnsafe(Math.max(data.length * 2, length + chunk.length));
        data.copy(grown, 0, 0, length);
        data = grown;
      }
      data.set(chunk, length);
      length += chunk.length;
    },
    get data() {
      return data;
    },
    get length() {
      return length;
    },
  };
}
