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
  agent: Agent | false = false,
): Promise<ChunkedAnswer> {
  const url = new URL(path, baseURL);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: "POST", headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.on("end", () => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString("utf8"), sentChunked: req.chunkedEncoding });
      });
      res.on("error", reject);
    });
    // A server may answer (413) and stop reading before the last chunk: only an error before any answer counts.
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    void (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return;
        req.write(chunk);
        await sleep(5);
      }
      req.end();
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
