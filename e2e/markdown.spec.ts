import { createToken, expect, revokeToken, test } from "./support/fixtures";
import { bearer, expectError, packetFor, storePacket, uniqueId } from "./support/api";

/** GET /api/v1/packets/{id}/markdown: a stored version rendered as a pull-request body. */

const markdownPath = (id: string) => `/api/v1/packets/${encodeURIComponent(id)}/markdown`;

test.describe("GET /api/v1/packets/{id}/markdown", () => {
  test("200 with the rendered markdown of that version, its next action and its command", async ({ request, agentToken }) => {
    const thread = uniqueId("markdown");
    const stored = await storePacket(
      request,
      agentToken,
      packetFor(thread, {
        summary: "Moved the invoices table. <script>alert(1)</script>",
        next_action: { action: "run the invoice migration on staging", command: "npm run migrate -- --to 42", owner: "agent" },
        open_risks: [{ severity: "blocker", detail: "the migration is not reversible\n| broken | row |" }],
      }),
    );

    const response = await request.get(markdownPath(stored.packet_id), { headers: bearer(agentToken) });
    const body = await response.text();
    expect(response.status(), body).toBe(200);
    expect(response.headers()["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(response.headers()["content-disposition"]).toBe('inline; filename="handoff.md"');
    expect(response.headers()["x-content-type-options"]).toBe("nosniff");

    expect(body.startsWith(`# Handoff: \`${thread}\`\n`)).toBe(true);
    expect(body).toContain(`**Packet:** \`${stored.packet_id}\``);
    expect(body).toContain("## Next action\n\nrun the invoice migration on staging\n\n```sh\nnpm run migrate -- --to 42\n```\n\n**Owner:** agent\n");
    expect(body).toContain("| critical (given as \"blocker\") | the migration is not reversible \\| broken \\| row \\| |\n");
    expect(body).toContain("Moved the invoices table. &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(body).not.toContain("<script>");
    expect(body.endsWith("\n") && !body.endsWith("\n\n")).toBe(true);
  });

  test("says plainly when the version has no next action", async ({ request, agentToken }) => {
    const stored = await storePacket(request, agentToken, packetFor(uniqueId("markdown-no-next"), { next_action: "no next_action recorded; needs human" }));
    const response = await request.get(markdownPath(stored.packet_id), { headers: bearer(agentToken) });
    expect(response.status()).toBe(200);
    const body = await response.text();
    expect(body).toContain("## Next action\n\nNo next action recorded.\n");
    expect(body).toContain("(`missing_next_action`)");
  });

  test("404 with the JSON error body for an unknown packet id", async ({ request, agentToken }) => {
    const response = await request.get(markdownPath(uniqueId("pv_unknown")), { headers: bearer(agentToken) });
    await expectError(response, 404, "not_found");
  });

  test("401 without a token or with a revoked one, 403 without the read scope", async ({ request, agentToken }) => {
    const stored = await storePacket(request, agentToken, packetFor(uniqueId("markdown-auth")));
    const url = markdownPath(stored.packet_id);

    await expectError(await request.get(url), 401, "unauthenticated");
    await expectError(await request.get(url, { headers: { authorization: "Bearer btn_nope_nope" } }), 401, "unauthenticated");

    const revoked = await createToken(uniqueId("markdown-revoked"), ["packets:read"]);
    await revokeToken(revoked);
    await expectError(await request.get(url, { headers: bearer(revoked) }), 401, "unauthenticated");

    const writeOnly = await createToken(uniqueId("markdown-write-only"), ["packets:write"]);
    const error = await expectError(await request.get(url, { headers: bearer(writeOnly) }), 403, "forbidden");
    expect(error.details).toEqual({ required_scope: "packets:read", token_scopes: ["packets:write"] });
  });
});
