import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { CanonicalPacket } from "./canonical";
import { preparePacket } from "./prepare";
import { THREAD_KEY_MAX_LENGTH, threadKeyFor } from "./thread-key";

const HASH = "0123456789abcdef".repeat(4);
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function packet(fields: Partial<CanonicalPacket>): CanonicalPacket {
  return { schema_version: 1, summary: "s", extra: {}, ...fields };
}
const key = (fields: Partial<CanonicalPacket>) => threadKeyFor(packet(fields), HASH);

const ALL: Partial<CanonicalPacket> = {
  thread: "payments/refunds",
  project: "acme/payments",
  branch: "feat/refunds",
  topic: "webhooks",
  task_id: "PAY-1",
  agent: { name: "bot" },
  session_id: "sess-1",
};

describe("thread key rules", () => {
  it("1. an explicit thread wins over everything else", () => {
    expect(key(ALL)).toBe("payments/refunds");
  });

  it("2. project + branch + topic, topic preferred over task_id", () => {
    expect(key({ ...ALL, thread: undefined })).toBe("acme/payments@feat/refunds#webhooks");
  });

  it("2. project + branch + task_id when there is no topic", () => {
    expect(key({ ...ALL, thread: undefined, topic: undefined })).toBe("acme/payments@feat/refunds#PAY-1");
  });

  it("2. project + branch alone", () => {
    expect(key({ project: "acme/payments", branch: "main", agent: { name: "bot" }, session_id: "s" })).toBe("acme/payments@main");
  });

  it("2. branch only (no project) still keys by branch, before agent + task", () => {
    expect(key({ branch: "main" })).toBe("@main");
    expect(key({ branch: "main", task_id: "T-1", agent: { name: "bot" } })).toBe("@main#T-1");
  });

  it("2. project only", () => {
    expect(key({ project: "acme/web", topic: "docs" })).toBe("acme/web@#docs");
  });

  it("3. agent + task_id when there is no project or branch", () => {
    expect(key({ agent: { name: "bot", model: "opus" }, task_id: "T-1", session_id: "sess-1" })).toBe("agent:bot#T-1");
  });

  it("3. task only, before session, when no agent is named", () => {
    expect(key({ task_id: "T-1", session_id: "sess-1" })).toBe("task:T-1");
  });

  it("4. session_id, a thread of one; an agent alone does not make a thread", () => {
    expect(key({ session_id: "sess-1", agent: { name: "bot" } })).toBe("session:sess-1");
  });

  it("falls back to the content hash", () => {
    expect(key({ agent: { name: "bot" }, topic: "orphan topic" })).toBe("packet:0123456789abcdef");
  });

  it("ignores blank metadata, through normalisation", () => {
    const prepared = preparePacket({ summary: "s", thread: "  ", project: "", branch: " ", task_id: "T-9" }, 0);
    expect(prepared.threadKey).toBe("task:T-9");
  });

  it("uses the packet's real content hash for the fallback", () => {
    const received = { summary: "only a summary" };
    const prepared = preparePacket(received, 0);
    expect(prepared.contentHash).toBe(sha256('{"summary":"only a summary"}'));
    expect(prepared.threadKey).toBe(`packet:${prepared.contentHash.slice(0, 16)}`);
  });

  it("uses repo in place of project", () => {
    expect(preparePacket({ summary: "s", repo: "acme/api", branch: "main" }, 0).threadKey).toBe("acme/api@main");
  });

  it("trims an explicit thread", () => {
    expect(preparePacket({ summary: "s", thread: "  my-thread " }, 0).threadKey).toBe("my-thread");
  });
});

describe("overlong thread keys", () => {
  it("are kept as they are up to the limit", () => {
    const exact = "t".repeat(THREAD_KEY_MAX_LENGTH);
    expect(THREAD_KEY_MAX_LENGTH).toBe(512);
    expect(key({ thread: exact })).toBe(exact);
  });

  it("are bounded to the limit with a hash of the whole key", () => {
    const long = "x".repeat(600);
    const bounded = key({ thread: long });
    expect(bounded).toHaveLength(512);
    expect(bounded).toBe(`${"x".repeat(495)}~${sha256(long).slice(0, 16)}`);
  });

  it("keep distinct long keys distinct", () => {
    const prefix = "p".repeat(600);
    const a = key({ thread: `${prefix}a` });
    const b = key({ thread: `${prefix}b` });
    expect(a).not.toBe(b);
    expect(a.slice(0, 495)).toBe(b.slice(0, 495));
  });

  it("applies to composed keys too", () => {
    const bounded = key({ project: "acme", branch: "b".repeat(1000), topic: "t" });
    expect(bounded).toHaveLength(512);
    expect(bounded.startsWith("acme@bbb")).toBe(true);
    expect(bounded.endsWith(`~${sha256(`acme@${"b".repeat(1000)}#t`).slice(0, 16)}`)).toBe(true);
  });
});
