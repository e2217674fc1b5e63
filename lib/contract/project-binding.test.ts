import { describe, expect, it } from "vitest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { preparePacket } from "./prepare";
import { projectNameSchema, threadOutsideProject } from "./project-binding";

/** Project-bound tokens in the contract (docs/decisions/056-project-bound-tokens.md). */

const NOW = Date.parse("2026-12-01T12:00:00Z");
const taskOnly = { task_id: "T-001", summary: "same words", next_action: "go on" };
const prepare = async (packet: unknown, project?: string) => preparePacket(packet, NOW, project);

describe("a packet sent with a project-bound token", () => {
  it("takes the token's project when it names none: keyed and hashed with it, stored as received with it", async () => {
    const unbound = await prepare(taskOnly);
    const alpha = await prepare(taskOnly, "alpha");
    const beta = await prepare(taskOnly, "beta");
    expect([unbound.threadKey, alpha.threadKey, beta.threadKey]).toEqual(["task:T-001", "alpha@#T-001", "beta@#T-001"]);
    expect(new Set([unbound.contentHash, alpha.contentHash, beta.contentHash]).size).toBe(3);
    expect(alpha.received).toEqual({ ...taskOnly, project: "alpha" });
    expect(alpha.canonical.project).toBe("alpha");
    // Sending the file again, now naming its project, is the same content.
    expect((await prepare({ ...taskOnly, project: "alpha" }, "alpha")).contentHash).toBe(alpha.contentHash);
    // A blank project is none.
    expect((await prepare({ ...taskOnly, project: "  " }, "alpha")).threadKey).toBe("alpha@#T-001");
  });

  it("keeps its own project, and is refused naming another, in project or repo (403 naming both)", async () => {
    expect((await prepare({ ...taskOnly, project: "alpha", branch: "main" }, "alpha")).threadKey).toBe("alpha@main#T-001");
    const named = await expectBatonError(prepare({ ...taskOnly, project: "beta" }, "alpha"), "forbidden");
    expect(named.status).toBe(403);
    expect(named.details).toEqual({ field: "project", token_project: "alpha", packet_project: "beta" });
    expect(named.message).toContain('bound to project "alpha"; the packet names project "beta"');
    const viaRepo = await expectBatonError(prepare({ ...taskOnly, repo: "beta" }, "alpha"), "forbidden");
    expect(viaRepo.details).toMatchObject({ field: "repo" });
  });
});

describe("threadOutsideProject", () => {
  it("lets a bound token write its project's threads only", () => {
    expect(threadOutsideProject("alpha@main", "alpha", "alpha")).toBeNull();
    expect(threadOutsideProject("beta@main", "beta", "alpha")?.message).toContain('thread "beta@main" belongs to project "beta"');
    expect(threadOutsideProject("task:T-1", null, "alpha")?.message).toContain('thread "task:T-1" has no project');
  });
});

describe("projectNameSchema", () => {
  it("reads a name as a packet's project field: trimmed, NFC; blank, invisible characters and non-strings refused", () => {
    expect(projectNameSchema.parse("  cafe\u0301 ")).toBe("caf\u00e9");
    const problem = (value: unknown) => projectNameSchema.safeParse(value).error?.issues[0]?.message;
    expect(problem(" ")).toContain("project must not be blank");
    expect(problem("al\u202epha")).toContain("project contains U+202E");
    expect(problem(" alpha\n")).toContain("project contains U+000A");
    expect(problem(7)).toContain("project must be a string");
  });
});
