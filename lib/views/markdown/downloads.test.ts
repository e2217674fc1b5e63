import { beforeAll, describe, expect, it } from "vitest";
import * as packetMarkdown from "@/app/api/v1/packets/[id]/markdown/route";
import * as handoffMd from "@/app/threads/[key]/handoff.md/route";
import type { Person } from "../../auth/roles";
import { createApiToken } from "../../auth/tokens";
import { createFirstAdmin } from "../../auth/users";
import { decide } from "../../human/actions";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";

/** Both Markdown downloads of a version carry its people section, settled instructions marked. */

freshDatabaseForThisFile();

const ORIGIN = "http://baton.test";
let readToken = "";
let person: Person;

beforeAll(async () => {
  readToken = (await createApiToken("markdown-reader", ["packets:read"])).token;
  const admin = await createFirstAdmin({ username: "mara", password: "a long enough password" });
  person = { id: admin.id, username: admin.username, role: admin.role };
});

function call(handler: (request: Request, segment: { params: Promise<never> }) => Promise<Response>, url: string, params: Record<string, string>) {
  const request = new Request(`${ORIGIN}${url}`, { headers: { authorization: `Bearer ${readToken}` } });
  return handler(request, { params: Promise.resolve(params) as Promise<never> });
}

describe("the Markdown downloads", () => {
  it("carry the people section: the decision, and an earlier instruction settled by the approval", async () => {
    const thread = "markdown-downloads";
    const { packet_id } = await ingestPacket({ thread, summary: "moved the table", next_action: "drop the old table" }, { kind: "http", actor: "test" });
    await decide(person, thread, { kind: "intervened", packet_id, base_revision: 0, question: "Keep a backup of the old table first." });
    await decide(person, thread, { kind: "approved", packet_id, base_revision: 1, note: "Backup taken, go ahead." });

    const bodies = [
      await (await call(packetMarkdown.GET as never, `/api/v1/packets/${packet_id}/markdown`, { id: packet_id })).text(),
      await (await call(handoffMd.GET as never, `/threads/${thread}/handoff.md`, { key: thread })).text(),
    ];
    for (const body of bodies) {
      expect(body).toContain("## Decision and answers");
      expect(body).toContain("**Approved: go ahead with the next action** (mara,");
      expect(body).toContain("Backup taken, go ahead.");
      expect(body).toMatch(/\*\*Settled\*\* by mara, \S+: Keep a backup of the old table first\./);
      expect(body).not.toContain("**Blocking:**");
    }
  });
});
