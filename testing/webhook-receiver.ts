import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** For tests: a local HTTP receiver that records every request and answers as scripted. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  body: Buffer;
}

export interface TestReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** The statuses of the next answers, in order (0: never answer); once used up, 200. */
  script: number[];
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startTestReceiver(script: number[] = []): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const receiver = { script } as TestReceiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) });
      const status = receiver.script.shift() ?? 200;
      for (const wake of [...waiters]) wake();
      if (status === 0) return;
      response.writeHead(status, { "content-type": "text/plain", ...(status >= 300 && status < 400 ? { location: "/elsewhere" } : {}) }).end(status < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    waitFor(count: number, timeoutMs = 10_000) {
      return new Promise<ReceivedRequest[]>((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} requests, got ${requests.length} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return receiver;
}
