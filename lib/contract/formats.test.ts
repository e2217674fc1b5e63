import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BatonError } from "../core/errors";
import { mapToContract, snakeCase } from "./aliases";
import { markdownToPacket } from "./markdown";
import { preparePacket } from "./prepare";

const FORMATS = path.join(process.cwd(), "testing/fixtures/formats");
const RECEIVED_AT = Date.UTC(2026, 11, 1, 12);

function prepareFixture(name: string) {
  const text = readFileSync(path.join(FORMATS, name), "utf8");
  return preparePacket(name.endsWith(".md") ? markdownToPacket(text) : JSON.parse(text), RECEIVED_AT);
}

/** Runs `refuse`, expects it to throw a BatonError of `code`, and returns that error. */
function expectBatonError(refuse: () => unknown, code: string): BatonError {
  let caught: unknown = null;
  try {
    refuse();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(BatonError);
  expect((caught as BatonError).code).toBe(code);
  return caught as BatonError;
}

type Prepared = ReturnType<typeof preparePacket>;

/** What a person reads first of a mapped handoff: the next action and the later steps, the risks (severity, detail), the questions. */
const readingOf = ({ canonical }: Prepared) => ({
  next_action: canonical.next_action?.text,
  next_steps: canonical.extra.next_steps,
  risks: (canonical.open_risks ?? []).map((risk) => [risk.severity, risk.detail]),
  questions: (canonical.questions_for_human ?? []).map((question) => question.question),
});
const mappedFromOf = (prepared: Prepared) => prepared.flags.find((flag) => flag.code === "mapped_from")?.reason;

interface PublishedShape {
  title: string;
  fixture: string;
  reading: ReturnType<typeof readingOf>;
  /** The mapped_from flag's reason: the whole text, or expect.stringMatching for what matters of it. */
  mappedFrom: unknown;
  /** What else the fixture shows, beyond what every one is checked for. */
  alsoShows?: (prepared: Prepared) => void;
}

/** Each fixture: what a person reads first of it, how the flag names its mapping, and what else it shows. */
const PUBLISHED_SHAPES: PublishedShape[] = [
  {
    title: "HumanLayer create_handoff: front matter and sections",
    fixture: "humanlayer-create-handoff.md",
    reading: {
      next_action: "Add exponential back-off to the worker in `src/billing/worker.py` (base 30 s, cap 1 h).",
      next_steps: [
        "Write the integration test that kills the worker mid-claim and checks the invoice is claimed again.",
        "Start phase 3 once phase 2 is merged.",
      ],
      risks: [],
      questions: ["Should invoices that fail 10 times page the on-call, or only show on the admin page?"],
    },
    mappedFrom: expect.stringMatching(/^Mapped from Markdown with YAML front matter \(HumanLayer create_handoff\)/),
    alsoShows: (prepared) => {
      expect(prepared.canonical).toMatchObject({
        agent: { name: "otter-agent" },
        project: "ledgerly",
        branch: "feat/invoice-retries",
        created_at: "2026-11-30T21:42:10.000Z",
      });
      expect(prepared.canonical.summary).toMatch(/^Move failed invoice deliveries onto a retry queue/);
      expect(prepared.canonical.changed_files?.map((file) => file.path)).toEqual([
        "src/billing/retry_queue.py",
        "src/billing/deliver.py",
        "migrations/0042_retry_queue.sql",
      ]);
      expect(prepared.threadKey).toBe("ledgerly@feat/invoice-retries#Invoice retry queue implementation strategy");
    },
  },
  {
    title: "HANDOFF.md: next steps without the done ones, open questions, blockers as high risks",
    fixture: "HANDOFF.md",
    reading: {
      next_action: "Propagate deletes: listen for `document.deleted` and remove the entry from the index",
      next_steps: ["Remove the old cron entry from the ops repository once deletes work"],
      risks: [["high", "The staging search cluster rejects our service account (403); ops ticket OPS-77 is open."]],
      questions: ["Is it acceptable that search results lag writes by up to 30 seconds?", "Who owns the ops repository change?"],
    },
    mappedFrom: expect.stringMatching(/^Mapped from a Markdown handoff \(HANDOFF\.md, HANDOVER\.md\)/),
  },
  {
    title: "HANDOVER.md: risks with their severity words, failed attempts, fenced commands, 'None.' as nothing",
    fixture: "HANDOVER.md",
    reading: {
      next_action: "Remove the timeout fallback on the code screen and show an error instead.",
      next_steps: ["Try the `textContentType=\"oneTimeCode\"` attribute on the iOS input before any library change."],
      risks: [
        ["high", "the code screen accepts any six digits when the API times out (fallback left from the prototype)."],
        ["low", "the resend button can be pressed twice within a second."],
        ["medium", "The analytics event for sign-in is sent twice on Android."],
      ],
      questions: [],
    },
    mappedFrom: expect.stringMatching(/^Mapped from a Markdown handoff/),
    alsoShows: (prepared) => {
      expect(prepared.canonical.commands_run?.map((command) => command.command)).toEqual([
        "npm run test:android",
        "npm run build:ios -- --configuration Debug",
      ]);
      expect(prepared.canonical.failed_attempts).toHaveLength(2);
    },
  },
  {
    title: "camelCase JSON: every contract name in camelCase, and sessionSummary, filesModified, nextSteps, blockers, openQuestions",
    fixture: "camel-case.json",
    reading: {
      next_action: "Backfill the style hash for tiles already in the shared cache",
      next_steps: ["Lower the cache TTL back to 24 h once the backfill has run"],
      risks: [
        ["high", "The shared cache has no bulk-rewrite API; a backfill must re-render every tile"],
        ["medium", "Two styles share one hash when only their font stack differs"],
      ],
      questions: ["May the backfill run during business hours?"],
    },
    mappedFrom: expect.stringMatching(/^Mapped from camelCase JSON: sessionId → session_id, .*sessionSummary → summary/),
    alsoShows: (prepared) => {
      expect(prepared.canonical).toMatchObject({
        session_id: "sess-7f3a",
        last_known_good_commit: "3b9d2e1",
        created_at: "2026-11-30T09:15:00.000Z",
        summary: expect.stringMatching(/^Fixed the tile cache/),
        changed_files: [{ path: "src/tiles/cache.ts" }, { path: "src/tiles/cache.test.ts" }],
        commands_run: [{ command: "npm test -- tiles", exit_code: 0, duration_ms: 8120 }],
      });
      expect(prepared.flags.map((flag) => flag.code)).not.toContain("missing_next_action");
      // The packet as received is what is stored and served.
      expect(Object.keys(prepared.received)).toContain("sessionSummary");
    },
  },
  {
    title: "v0: next_steps[0] the next action and the rest in order, blockers as high risks, open_todos and decisions kept",
    fixture: "v0.json",
    reading: {
      next_action: "Ask infra to raise the load balancer idle timeout for /exports to 300 s",
      next_steps: [
        "Add a progress header so clients can show how far the export is",
        "Remove export_v1 once the flag has been off for a week",
      ],
      risks: [["high", "Exports over 2 GB still time out at the load balancer (60 s idle limit)"]],
      questions: [],
    },
    mappedFrom: "Mapped from the v0 JSON shape: blockers → open_risks, next_steps → next_action. 2 later steps kept in next_steps.",
    alsoShows: (prepared) => {
      expect(prepared.canonical.extra.open_todos).toEqual(["Delete the export_v1 flag after the next release", "Document the new Content-Disposition name"]);
      expect(prepared.canonical.extra.decisions).toHaveLength(2);
    },
  },
];

describe("the published shapes in testing/fixtures/formats", () => {
  // A loop rather than it.each: each test is named by its whole title.
  for (const { title, fixture, reading, mappedFrom, alsoShows } of PUBLISHED_SHAPES) {
    it(title, () => {
      const prepared = prepareFixture(fixture);
      expect(readingOf(prepared)).toEqual(reading);
      expect(mappedFromOf(prepared)).toEqual(mappedFrom);
      alsoShows?.(prepared);
    });
  }
});

describe("mapToContract", () => {
  it("derives camelCase aliases from the schema, so a field added later gets one too", () => {
    expect(snakeCase("assumptionsToValidate")).toBe("assumptions_to_validate");
    const { packet } = mapToContract({ summary: "s", assumptionsToValidate: ["a"], feedbackTail: [{ command: "x", exitCode: 1, stdoutTail: "…" }] });
    expect(packet).toEqual({ summary: "s", assumptions_to_validate: ["a"], feedback_tail: [{ command: "x", exit_code: 1, stdoutTail: "…" }] });
  });

  it("lets the contract's own name win over an alias, and leaves a contract packet alone", () => {
    const mixed = mapToContract({ next_action: "contract", nextAction: "camel", next_steps: ["v0"], summary: "s" });
    expect(mixed.packet.next_action).toBe("contract");
    expect(mixed.packet.nextAction).toBe("camel");
    const plain = { summary: "s", next_action: "n", open_risks: ["r"] };
    expect(mapToContract(plain)).toEqual({ packet: plain, mappedFrom: null });
  });

  it("adds blockers after the packet's own risks", () => {
    const { packet } = mapToContract({ open_risks: [{ severity: "low", detail: "a" }], blockers: ["b"] });
    expect(packet.open_risks).toEqual([{ severity: "low", detail: "a" }, { severity: "high", detail: "b" }]);
  });

  it("keeps __proto__ as plain data", () => {
    const received = JSON.parse('{"summary": "s", "__proto__": {"polluted": true}, "nextSteps": ["go"]}') as Record<string, unknown>;
    const { packet } = mapToContract(received);
    expect(Object.getPrototypeOf(packet)).toBe(Object.prototype);
    expect(Object.keys(packet)).toContain("__proto__");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("names a refused field as the producer spelled it", () => {
    const error = expectBatonError(() => preparePacket({ summary: "s", openRisks: 3 }, RECEIVED_AT), "invalid_fields");
    expect(error.message).toContain("openRisks (read as open_risks)");
  });

  it("turns a body of only aliases that are not packets into no_core_fields, as before", () => {
    expectBatonError(() => preparePacket({ openTodos: ["x"] }, RECEIVED_AT), "no_core_fields");
  });
});

describe("markdownToPacket on bad input", () => {
  it("refuses a YAML alias bomb", () => {
    const bomb = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]", ..."bcdefghi".split("").map((name, i) => `${name}: &${name} [${Array(10).fill(`*${"abcdefghi"[i]}`).join(", ")}]`), "---", "## Summary", "s"].join("\n");
    const error = expectBatonError(() => markdownToPacket(bomb), "invalid_markdown");
    expect(error.message).toMatch(/aliases more than \d+ times/);
  });

  it("refuses front matter larger than its limit, never closed, not a mapping, not YAML, or nested too deep", () => {
    expect(expectBatonError(() => markdownToPacket(`---\nnote: "${"x".repeat(70_000)}"\n---\n# T`), "invalid_markdown").message).toMatch(/larger than 65536 bytes/);
    expect(expectBatonError(() => markdownToPacket("---\nsummary: s\n## Next steps\n- go"), "invalid_markdown").message).toMatch(/never closed/);
    expect(expectBatonError(() => markdownToPacket("---\n- a\n- b\n---\n# T"), "invalid_markdown").message).toMatch(/not a YAML mapping/);
    expect(expectBatonError(() => markdownToPacket("---\na: [unclosed\n---\n# T"), "invalid_markdown").message).toMatch(/not valid YAML \(\w+ at line \d+\)/);
    expect(expectBatonError(() => markdownToPacket(`---\na: ${"[".repeat(100)}${"]".repeat(100)}\n---\n# T`), "invalid_markdown").message).toMatch(/nests deeper than 64/);
    expect(expectBatonError(() => markdownToPacket(`---\na: ${"[".repeat(20_000)}\n---\n# T`), "invalid_markdown").message).toMatch(/not valid YAML/);
    // An alias inside its own anchor is a cycle: refused as too deep, before anything walks it.
    expect(expectBatonError(() => markdownToPacket("---\na: &a\n  b: *a\n---\n# T"), "invalid_markdown").message).toMatch(/nests deeper than 64/);
  });

  it("refuses a document with nothing Baton reads, saying which headings it looks for", () => {
    const error = expectBatonError(() => markdownToPacket("Some notes without headings.\n\n## Learnings\nnothing"), "invalid_markdown");
    expect(error.message).toContain('"## Next steps"');
  });

  it("reads headings outside code fences only, and keeps the text verbatim", () => {
    const text = "## Next steps\n\n```\n## Blockers\n- not a blocker\n```\n\n- ship it\n";
    const packet = markdownToPacket(text);
    expect(packet.next_steps).toEqual(["ship it"]);
    expect(packet.blockers).toBeUndefined();
    expect(packet.received_markdown).toEqual({ format: "markdown_sections", text });
  });

  it("redacts secrets in the kept text like any other string", () => {
    const secret = `ghp_${"A1b2C3d4E5".repeat(4).slice(0, 36)}`;
    const prepared = preparePacket(markdownToPacket(`## Summary\nUsed ${secret} to push.\n`), RECEIVED_AT);
    expect(JSON.stringify(prepared.received)).not.toContain(secret);
    expect(prepared.secretsRedacted.count).toBeGreaterThan(0);
  });
});
