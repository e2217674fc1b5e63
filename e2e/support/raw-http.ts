import { request as httpRequest, type Agent } from "node:http";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * HTTP below Playwright's request fixture, which always sets Content-Length
 * itself: for bodies sent without one, or with one that lies.
 */

export interface ChunkedAnswer {
  status: number;
  body: string;
  /** Whether Node framed the request with Transfer-Encoding: chunked (no Content-Length). */
  sentChunked: boolean;
  /** Whether the client had sent the whole body (false: the answer came while it waited, with more to send). */
  ended: boolean;
}

export interface ChunkedOptions {
  /** A (keep-alive) agent; by default a connection of its own. */
  agent?: Agent | false;
  /**
   * A server that refuses a body past its limit answers and closes the connection without
   * reading the rest (413, Connection: close). A client still writing then gets EPIPE or
   * ECONNRESET, and Node drops the answer with the socket. Past this many bytes the client
   * stops writing, without ending the body, and waits for the answer, which must come
   * before the rest of the body would.
   */
  stopAfterBytes?: number;
}

/**
 * POSTs `chunks` one write at a time, without Content-Length: Node sends them
 * chunked. On a connection of its own unless given a (keep-alive) agent.
 */
export function postChunked(
  baseURL: string,
  path: string,
  headers: Record<string, string>,
  chunks: Buffer[],
  { agent = false, stopAfterBytes = Number.POSITIVE_INFINITY }: ChunkedOptions = {},
): Promise<ChunkedAnswer> {
  const url = new URL(path, baseURL);
  return new Promise((resolve, reject) => {
    let answer: { status: number; parts: Buffer[]; length: number; expected: number } | null = null;
    const settle = () => {
      const { status, parts } = answer!;
      resolve({ status, body: Buffer.concat(parts).toString("utf8"), sentChunked: req.chunkedEncoding, ended: req.writableEnded });
      // A body we stopped sending is abandoned with its connection (the server closes it too).
      if (!req.writableEnded) req.destroy();
    };
    const req = httpRequest(url, { method: "POST", headers, agent }, (res) => {
      answer = { status: res.statusCode ?? 0, parts: [], length: 0, expected: Number(res.headers["content-length"] ?? Number.NaN) };
      res.on("data", (part: Buffer) => {
        answer!.parts.push(part);
        answer!.length += part.length;
      });
      res.on("end", settle);
    });
    // The server closing after its answer may reset the connection before Node has emitted the
    // answer's end: an answer received whole (its Content-Length) is the answer all the same.
    req.on("error", (error) => (answer && answer.length === answer.expected ? settle() : reject(error)));
    void (async () => {
      let sent = 0;
      for (const chunk of chunks) {
        if (sent > stopAfterBytes || req.destroyed) return;
        // Each chunk is handed to the kernel before the next is written.
        await new Promise<void>((written) => req.write(chunk, () => written()));
        sent += chunk.length;
        await sleep(5);
      }
      if (sent <= stopAfterBytes && !req.destroyed) req.end();
    })();
  });
}

export interface RawExchange {
  /** The status of every HTTP response the server wrote on the connection, in order. */
  statuses: number[];
  /** Everything the server wrote, as latin1 text. */
  text: string;
}

/**
 * Writes `head` and `body` on a raw TCP connection, half-closes it and
 * collects whatever the server writes until it closes the connection.
 */
export function rawHttpExchange(baseURL: string, head: string, body: Buffer, timeoutMs = 15_000): Promise<RawExchange> {
  const url = new URL(baseURL);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("data", (part: Buffer) => parts.push(part));
    // The server may close while we still write the rest (EPIPE, ECONNRESET): what it answered is what matters.
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(parts).toString("latin1");
      const statuses = [...text.matchAll(/^HTTP\/1\.[01] (\d{3})/gm)].map((match) => Number(match[1]));
      resolve({ statuses, text });
    });
    socket.write(head);
    socket.write(body, () => socket.end());
  });
}

/**
 * Sends headers announcing `declaredLength` bytes, then only `firstBytes`, and
 * waits for an answer that must come before the rest of the body would.
 */
export function postDeclaringLength(
  baseURL: string,
  path: string,
  headers: Record<string, string>,
  declaredLength: number,
  firstBytes: Buffer,
): Promise<{ status: number; body: string }> {
  const url = new URL(path, baseURL);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "content-length": String(declaredLength) }, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString("utf8") });
        req.destroy();
      });
    });
    req.on("error", reject);
    req.write(firstBytes);
  });
}
