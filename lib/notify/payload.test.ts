import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { escapeSlack, genericBody, renderBody, slackBody, type Notification } from "./payload";
import { signBody, verifySignature } from "./signature";

const notification: Notification = {
  event: "question.asked",
  threadKey: "billing/retry#1",
  packetId: "pv_1",
  ledgerSeq: 42,
  thread: { topic: "Retries", agent: "claude", project: "billing", branch: "main" },
  summary: "claude asks: May I <drop> the table & rebuild it?",
  detail: { questions: [{ id: "q1", question: "May I <drop> the table & rebuild it?", blocking: true, options: [] }] },
  lines: ["[blocking] May I <drop> the table & rebuild it?"],
};
const envelope = { deliveryId: "wd_1", createdAt: new Date("2026-11-30T10:00:00.000Z"), publicUrl: "https://baton.example.com" };

describe("signature", () => {
  it("is the hex HMAC-SHA256 of the exact bytes, and verifies only with the same secret and bytes", () => {
    const body = renderBody("generic", notification, envelope);
    const header = signBody(body, "a-secret-of-16-chars");
    expect(header).toBe(`sha256=${createHmac("sha256", "a-secret-of-16-chars").update(Buffer.from(body, "utf8")).digest("hex")}`);
    expect(verifySignature(Buffer.from(body, "utf8"), "a-secret-of-16-chars", header)).toBe(true);
    expect(verifySignature(body, "another-secret-16-chars", header)).toBe(false);
    expect(verifySignature(`${body} `, "a-secret-of-16-chars", header)).toBe(false);
    expect(verifySignature(body, "a-secret-of-16-chars", null)).toBe(false);
  });
});

describe("bodies", () => {
  it("generic JSON names the event, the thread and its URL, the packet and the detail", () => {
    expect(genericBody(notification, envelope)).toEqual({
      id: "wd_1",
      event: "question.asked",
      created_at: "2026-11-30T10:00:00.000Z",
      ledger_seq: 42,
      thread: {
        key: "billing/retry#1",
        url: "https://baton.example.com/threads/billing%2Fretry%231",
        topic: "Retries",
        agent: "claude",
        project: "billing",
        branch: "main",
      },
      packet_id: "pv_1",
      summary: notification.summary,
      detail: notification.detail,
    });
  });

  it("a person's action also carries the human section and the URL of the merged handoff", () => {
    const human = { revision: 2, updated_at: "2026-11-30T09:59:00.000Z", decision: { kind: "approved" as const, by: "mei", at: "2026-11-30T09:59:00.000Z" }, answers: [], questions: [] };
    const approved: Notification = { ...notification, event: "decision.approved", summary: "mei approved: rebuild the table", detail: { revision: 2 }, lines: [], human };
    expect(genericBody(approved, envelope)).toEqual({
      ...genericBody({ ...approved, human: undefined }, envelope),
      human,
      handoff_url: "https://baton.example.com/api/v1/threads/billing%2Fretry%231/handoff",
    });
    expect(genericBody(notification, envelope)).not.toHaveProperty("handoff_url");
    const slack = slackBody(approved, envelope) as { text: string };
    expect(slack.text).toBe("Approved: mei approved: rebuild the table (billing/retry#1)");
  });

  it("Slack: text and blocks with an escaped link to the thread page", () => {
    const body = slackBody(notification, envelope) as { text: string; blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[] };
    expect(body.text).toBe("New question: claude asks: May I &lt;drop&gt; the table &amp; rebuild it? (billing/retry#1)");
    expect(body.blocks.map((block) => block.type)).toEqual(["section", "section", "context"]);
    expect(body.blocks[0]!.text!.text).toBe(
      "*New question* · <https://baton.example.com/threads/billing%2Fretry%231|billing/retry#1>\nclaude asks: May I &lt;drop&gt; the table &amp; rebuild it?",
    );
    expect(body.blocks[1]!.text!.text).toBe("• [blocking] May I &lt;drop&gt; the table &amp; rebuild it?");
    expect(body.blocks[2]!.elements![0]!.text).toBe("Baton · claude · billing · main");
    expect(JSON.parse(renderBody("slack", notification, envelope))).toEqual(body);
  });

  it("Slack: long lists and texts are cut to what Slack accepts", () => {
    const many = { ...notification, lines: Array.from({ length: 14 }, (_, index) => `line ${index} ${"x".repeat(600)}`) };
    const body = slackBody(many, envelope) as { blocks: { text?: { text: string } }[] };
    const list = body.blocks[1]!.text!.text.split("\n");
    expect(list).toHaveLength(11);
    expect(list[10]).toBe("• …and 4 more");
    expect(list[0]!.length).toBeLessThanOrEqual(252);
    expect(escapeSlack("a<b>&c")).toBe("a&lt;b&gt;&amp;c");
  });
});
