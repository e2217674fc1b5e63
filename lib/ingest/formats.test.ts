import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../db/client";
import { PACKET_MAX_BYTES } from "../contract/schema";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { createWriteToken, errorCodeOf, packetRequest, send } from "@/testing/hardening/ingest-harness";

/**
 * Other producers' formats through the real POST /api/v1/packets handler (in-process) into a
 * real database: each fixture of testing/fixtures/formats is stored with its next action,
 * risks, questions and mapped_from flag, and the received text is kept verbatim.
 */

freshDatabaseForThisFile();

const FORMATS = path.join(process.cwd(), "testing/fixtures/formats");
const MARKDOWN = { "content-type": "text/markdown; charset=utf-8" };
let token: string;
beforeAll(async () => {
  token = await createWriteToken("formats");
});

async function storedVersion(packetId: string) {
  const db = await database();
  const version = await db.packetVersion.findUniqueOrThrow({ where: { id: packetId } });
  return { ...version, received: JSON.parse(version.receivedJson) as Record<string, unknown>, canonical: JSON.parse(version.canonicalJson) };
}

const FIXTURES: { file: string; nextAction: string; risks: number; questions: number; format: RegExp }[] = [
  { file: "humanlayer-create-handoff.md", nextAction: "Add exponential back-off to the worker", risks: 0, questions: 1, format: /HumanLayer create_handoff/ },
  { file: "HANDOFF.md", nextAction: "Propagate deletes", risks: 1, questions: 2, format: /a Markdown handoff/ },
  { file: "HANDOVER.md", nextAction: "Remove the timeout fallback", risks: 3, questions: 0, format: /a Markdown handoff/ },
  { file: "camel-case.json", nextAction: "Backfill the style hash", risks: 2, questions: 1, format: /camelCase JSON/ },
  { file: "v0.json", nextAction: "Ask infra to raise", risks: 1, questions: 0, format: /the v0 JSON shape/ },
];

describe("POST /api/v1/packets with the published shapes", () => {
  it.each(FIXTURES)("stores $file with its next action, risks, questions and mapped_from", async ({ file, nextAction, risks, questions, format }) => {
    const text = readFileSync(path.join(FORMATS, file), "utf8");
    const sent = await send(packetRequest(token, text, file.endsWith(".md") ? MARKDOWN : {}));
    expect(sent.status, JSON.stringify(sent.json)).toBe(201);
    const answer = sent.json as { packet_id: string; flags: { code: string; reason: string }[] };
    expect(answer.flags.find((flag) => flag.code === "mapped_from")?.reason).toMatch(format);
    const version = await storedVersion(answer.packet_id);
    expect(version.nextAction).toMatch(new RegExp(`^${nextAction}`));
    expect(version.canonical.open_risks ?? []).toHaveLength(risks);
    expect(version.questionCount).toBe(questions);
    if (file.endsWith(".md")) expect((version.received.received_markdown as { text: string }).text).toBe(text);
    else expect(version.received).toEqual(JSON.parse(text));

    const again = await send(packetRequest(token, text, file.endsWith(".md") ? MARKDOWN : {}));
    expect(again.status).toBe(200);
    expect(again.added.versions).toBe(0);
  });

  it("refuses other text types with 415 saying both accepted types", async () => {
    const sent = await send(packetRequest(token, "## Summary\nx", { "content-type": "text/plain" }));
    expect(sent.status).toBe(415);
    expect(JSON.stringify(sent.json)).toContain("text/markdown");
  });

  it("refuses bad Markdown with 400 invalid_markdown naming the problem, and stores nothing", async () => {
    const bomb = `---\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n---\n## Summary\ns\n`;
    const sent = await send(packetRequest(token, bomb, MARKDOWN));
    expect(sent.status).toBe(400);
    expect(errorCodeOf(sent.json)).toBe("invalid_markdown");
    expect(sent.added.versions).toBe(0);

    const empty = await send(packetRequest(token, "just words\n", MARKDOWN));
    expect(errorCodeOf(empty.json)).toBe("invalid_markdown");
  });

  it("refuses Markdown that is not UTF-8, or larger than a packet", async () => {
    const latin1 = await send(packetRequest(token, Buffer.from("## Summary\nd\xe9j\xe0 vu\n", "latin1"), MARKDOWN));
    expect(errorCodeOf(latin1.json)).toBe("invalid_encoding");
    const huge = await send(packetRequest(token, `## Summary\n${"x".repeat(PACKET_MAX_BYTES)}\n`, MARKDOWN));
    expect(huge.status).toBe(413);
    expect(huge.added.versions).toBe(0);
  });
});
