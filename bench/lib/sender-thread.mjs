/**
 * The sustained load's HTTP requests, sent when due and timed on a thread of their own. An agent
 * is a process of its own: the viewers' streams and the Chromium pages' driver share the viewers'
 * event loop, and a stall of that loop (up to 300 ms with 50 viewers) would be counted in the
 * answer's time had it been read there, and would hold back the requests due meanwhile, to be
 * sent together after it. Driven by ./sustained-load.ts, which types its messages (plain
 * JavaScript: a worker thread does not inherit tsx's loader).
 */
import { parentPort } from "node:worker_threads";

const wallClock = () => performance.timeOrigin + performance.now();

/** @param {{ id: number; url: string; token: string; body: unknown }} request */
async function send({ id, url, token, body }) {
  const sent = wallClock();
  const begin = performance.now();
  try {
    const response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await response.text();
    return { id, ms: performance.now() - begin, status: response.status, text: text.slice(0, 300), sent, at: wallClock() };
  } catch (error) {
    return { id, ms: performance.now() - begin, status: 0, text: error instanceof Error ? error.message : String(error), sent, at: wallClock() };
  }
}

/** @param {{ id: number; url: string; token: string; body: unknown; due?: number }} request */
function sendWhenDue(request) {
  const post = () => void send(request).then((result) => parentPort?.postMessage(result));
  setTimeout(post, Math.max(0, (request.due ?? 0) - wallClock()));
}

// The whole schedule arrives at once: each request is sent when due (./sustained-load.ts).
parentPort?.on("message", sendWhenDue);
