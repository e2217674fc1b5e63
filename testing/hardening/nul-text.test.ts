import { describe, expect, it } from "vitest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { expectBatonError } from "@/testing/expect-baton-error";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { ingestPacket } from "../../lib/ingest/ingest";
import { createFirstAdmin } from "../../lib/auth/users";
import { createApiToken } from "../../lib/auth/tokens";
import { answer, answersRequestSchema, decide, decisionRequestSchema } from "../../lib/human/actions";
import { archiveThread } from "../../lib/human/archive";
import { recordSessionEvent, sessionEventRequestSchema } from "../../lib/board/watchdog/session-events";
import { createIntegration } from "../../lib/integrations/integrations";
import { newIntegrationSchema } from "../../lib/integrations/dto";
import { newBudgetSchema } from "../../lib/views/usage/dto";
import { createWebhook } from "../../lib/notify/webhooks";
import { newWebhookSchema } from "../../lib/notify/dto";
import { listThreadEvents } from "../../lib/events/queries";

/**
 * U+0000 and other characters a person cannot see, in what people and agents type besides
 * packets (lib/ingest/nul.test.ts has packets): PostgreSQL refuses U+0000 in text, so a
 * name that reached a text column was a 500 there. Names are refused with the field named,
 * on both databases; free text (answers, notes, reasons) is stored, since it is kept as JSON.
 */

freshDatabaseForThisFile();
allowWebhookTargetsForThisFile("127.0.0.1");
const NUL = "build\u0000bot";

const firstIssue = (result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.success ? null : [result.error!.issues[0]!.path.join("."), result.error!.issues[0]!.message];

describe("names people give", () => {
  it("are refused with the field named when they hold U+0000 or another invisible character", async () => {
    for (const text of [NUL, "build\u200bbot", "build\u202ebot"]) {
      expect(firstIssue(newWebhookSchema.safeParse({ name: text, url: "http://127.0.0.1:9/hook", events: ["question.asked"] }))?.[0]).toBe("name");
      expect(firstIssue(newIntegrationSchema.safeParse({ name: text, host: "github" }))?.[0]).toBe("name");
      expect(firstIssue(newBudgetSchema.safeParse({ project: text, period: "day", amount: 5 }))?.[0]).toBe("project");
      expect((await expectBatonError(createApiToken(text, ["packets:read"]), "invalid_request")).message).toMatch(/name contains U\+/);
    }
  });

  it("without such characters are stored as given, trimmed", async () => {
    const webhook = await createWebhook("admin", newWebhookSchema.parse({ name: " nightly ", url: "http://127.0.0.1:9/hook", events: ["question.asked"] }));
    const integration = await createIntegration("admin", newIntegrationSchema.parse({ name: "github main", host: "github" }));
    const token = await createApiToken(" build bot ", ["packets:read"]);
    expect([webhook.webhook.name, integration.integration.name, token.summary.name]).toEqual(["nightly", "github main", "build bot"]);
  });
});

describe("free text people and agents write", () => {
  it("keeps U+0000 in answers, approval notes, archive reasons and session notes", async () => {
    const admin = await createFirstAdmin({ username: "nul-admin", password: "a long enough password" });
    const thread = "nul/free-text";
    const stored = await ingestPacket(
      { thread, summary: "asks", next_action: "wait", questions_for_human: [{ id: "q1", question: "which?" }] },
      { kind: "http", actor: "token:test" },
    );
    await recordSessionEvent(thread, sessionEventRequestSchema.parse({ kind: "heartbeat", session_id: "s-1", note: NUL }), { actor: "token:test" });
    const answered = await answer(admin, thread, answersRequestSchema.parse({ packet_id: stored.packet_id, base_revision: 0, answers: [{ question_id: "q1", answer: NUL }] }));
    await decide(admin, thread, decisionRequestSchema.parse({ packet_id: stored.packet_id, base_revision: answered.human.revision, kind: "approved", note: NUL }));
    await archiveThread(admin, thread, NUL);
    const events = JSON.stringify(await listThreadEvents(thread, 50));
    expect(events.split("build\\u0000bot").length - 1).toBeGreaterThanOrEqual(3);
  });
});
