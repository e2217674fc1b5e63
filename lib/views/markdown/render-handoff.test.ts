import { afterEach, describe, expect, it, vi } from "vitest";
import type { CanonicalPacket, CanonicalRisk } from "../../contract/canonical";
import { preparePacket } from "../../contract/prepare";
import type { HumanSection } from "../../human/section";
import { examplePacketNames, examplePacketText } from "@/testing/packets";
import { NO_NEXT_ACTION, renderHandoffMarkdown, type RenderHandoffInput } from "./render-handoff";

const RECEIVED_AT = Date.parse("2026-11-29T08:00:00Z");

function example(name: string, packetId?: string): RenderHandoffInput {
  const { canonical, flags, threadKey } = preparePacket(JSON.parse(examplePacketText(name)), RECEIVED_AT);
  return { canonical, flags, threadKey, packetId };
}

const renderExample = (name: string, packetId?: string) => renderHandoffMarkdown(example(name, packetId));

const headings = (markdown: string) => markdown.split("\n").filter((line) => /^#{1,6} /.test(line));

/**
 * A small reader of the markdown this renderer writes: skips fenced blocks and
 * code spans, removes backslash escapes, and returns the text a CommonMark
 * parser would still read as syntax. Hostile content must leave none behind.
 */
function syntaxOutsideCode(markdown: string): string {
  let out = "";
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    if (fence !== null) {
      if (new RegExp(`^ {0,3}${fence}\`*\\s*$`).test(line)) fence = null;
      continue;
    }
    const opening = /^ {0,3}(`{3,})/.exec(line);
    if (opening?.[1]) {
      fence = opening[1];
      continue;
    }
    for (let index = 0; index < line.length; index++) {
      const char = line[index] as string;
      if (char === "\\" && /[!-/:-@[-`{-~]/.test(line[index + 1] ?? "")) {
        out += "\u0000"; // an escaped character: text, never syntax
        index++;
      } else if (char === "`") {
        const run = /^`+/.exec(line.slice(index))?.[0] ?? "`";
        const close = line.slice(index + run.length).search(new RegExp(`(?<!\`)${run}(?!\`)`));
        if (close === -1) out += run;
        index += close === -1 ? run.length - 1 : run.length + close + run.length - 1;
      } else {
        out += char;
      }
    }
    out += "\n";
  }
  expect(fence, "every code fence is closed").toBeNull();
  return out;
}

function expectNoInjectedSyntax(markdown: string): void {
  const syntax = syntaxOutsideCode(markdown);
  expect(syntax).not.toMatch(/[<>]/); // no raw HTML and no blockquote: < and > only as entities
  expect(syntax).not.toMatch(/&(?!amp;|lt;|gt;)/); // no entity the agent wrote
  expect(syntax).not.toContain("!["); // no image
  for (const match of syntax.matchAll(/\]\(([^)]*)/g)) expect(match[1]).toMatch(/^https?:\/\//); // links: http(s) only
}

/** Every table: header, delimiter and rows all have the same number of unescaped pipes. */
function expectTablesIntact(markdown: string): void {
  const tables = markdown.split(/\n(?!\|)/).filter((chunk) => chunk.startsWith("|"));
  for (const table of tables) {
    const counts = table.split("\n").map((row) => row.match(/(?<!\\)\|/g)?.length ?? 0);
    expect(new Set(counts).size, table).toBe(1);
  }
}

const hostileRisk = (id: string, severity: CanonicalRisk["severity"], detail: string): CanonicalRisk => ({
  id,
  severity,
  severity_raw: severity,
  detail,
  fingerprint: id,
});

describe("renderHandoffMarkdown: the example packets", () => {
  it("renders full-v1.json with every section, in order", () => {
    expect(renderExample("full-v1.json", "pv_golden")).toBe(`# Handoff: refund webhooks

**Agent:** payments-bot (claude-code, opus) · **Project:** acme/payments · **Branch:** \`feat/refund-webhooks\` · **Task:** PAY-311 · **Created:** 2026-11-29T06:41:12.000Z · **Last known good commit:** \`4e1c9a2\` · **Thread:** \`acme/payments@feat/refund-webhooks#refund webhooks\` · **Packet:** \`pv_golden\`

## Summary

Added the refund.succeeded and refund.failed webhook handlers with signature checks; retries are queued but the dead-letter path is untested.

## Next action

start the queue emulator and make test:dlq pass

\`\`\`sh
docker compose up -d queue && npm run test:dlq
\`\`\`

**Owner:** agent

## Open risks

| Severity | Risk | Mitigation |
| --- | --- | --- |
| high | dead-letter path never exercised; a failing handler may drop refunds silently | run test:dlq with the queue emulator |
| medium | signature tolerance window is 5 minutes; provider docs suggest 3 |  |
| low | router.ts has grown past 300 lines |  |

## Questions for a person

- Use a 3-minute or a 5-minute signature window?
  - Options:
    1. 3 minutes
    2. 5 minutes
- **Blocking:** May I add the queue emulator to docker-compose.yml?

## Changed files

- \`src/webhooks/refunds.ts\` (added, +184/-0)
- \`src/webhooks/router.ts\` (modified, +12/-3)
- \`test/webhooks/refunds.test.ts\` (added, +141/-0)

## Commands run

- \`npm test -- webhooks\`: exit 0, 8.1 s
- \`npm run typecheck\`: exit 0, 20.4 s
- **Did not finish:** \`npm run test:dlq\`: no exit code, 10 min

## Failed attempts

- npm run test:dlq: timed out after 10 minutes waiting for the local queue (no exit code)

## Assumptions to validate

- refund ids are unique per merchant, not globally (score 1)
- the provider retries for at most 72 hours

## Preconditions

- \`outputs/verification/PAY-311.json\`
- \`docs/decisions/012-webhook-retries.md\`

## Verdict

- Verification: passed
- Review: pass, 8/10
- Verification report: \`outputs/verification/PAY-311.json\`
- Review report: [https\\://ci.example.com/reviews/PAY-311](https://ci.example.com/reviews/PAY-311)

## Flags

- **Open questions** (\`open_questions\`): 2 questions for a person, 1 blocking.
`);
  });

  it("renders lesson-shape.json: raw severity words beside the canonical ones, highest first", () => {
    expect(renderExample("lesson-shape.json")).toBe(`# Handoff: T-014

**Task:** T-014 · **Thread:** \`task:T-014\`

## Summary

task T-014: review=soft\\_fail, gate=False

## Next action

switch invoice totals to Decimal with ROUND\\_HALF\\_EVEN, then rerun pytest api/billing -k rounding

## Open risks

| Severity | Risk |
| --- | --- |
| critical (given as "block") | acceptance.failed: test\\_invoice\\_rounding\\_half\\_even still red |
| medium (given as "warn") | off-scope: docs/billing.md |
| medium (given as "warn") | review total 6 below 7 |

## Changed files

- \`api/billing/invoice.py\`
- \`api/billing/tests/test_invoice.py\`
- \`docs/billing.md\`

## Commands run

- \`pytest api/billing\`
- \`ruff check api/billing\`
- \`pytest api/billing -k rounding\`
- \`pytest api/billing -k rounding\`

## Failed attempts

- pytest api/billing -k rounding -&gt; exit 1

## Verdict

- Verification report: \`outputs/verification/T-014.json\`
- Review report: \`outputs/review/T-014.json\`
`);
  });

  it("renders sentinel-next-action.json: the placeholder is no next action, and empty sections are left out", () => {
    expect(renderExample("sentinel-next-action.json")).toBe(`# Handoff: T-040

**Task:** T-040 · **Thread:** \`task:T-040\`

## Summary

task T-040: review=None, gate=None

## Next action

${NO_NEXT_ACTION}

## Verdict

- Verification report: \`outputs/verification/T-040.json\`
- Review report: \`outputs/review/T-040.json\`

## Flags

- **No next action** (\`missing_next_action\`): next\\_action is the generator's placeholder "needs human": the agent recorded no next step.
`);
  });

  it("renders dirty-state.json with its clean-state problems and the dirty_state flag", () => {
    const markdown = renderExample("dirty-state.json");
    expect(headings(markdown)).toEqual([
      "# Handoff: T-052",
      "## Summary",
      "## Next action",
      "## Open risks",
      "## Changed files",
      "## Commands run",
      "## Clean state problems",
      "## Verdict",
      "## Flags",
    ]);
    expect(markdown).toContain(
      "## Clean state problems\n\n- `working_tree`: infra/prod/vpc.tf modified and not committed\n- `temp_artifacts`: plan.tfplan.tmp left in infra/prod\n",
    );
    expect(markdown).toContain("- **Dirty workbench** (`dirty_state`): Clean-state check found 2 blocking problems:");
    expect(markdown).toContain("| critical | prod plan shows 3 resources to destroy |");
  });

  it("renders status-report.json: no next action, said plainly, and both flags", () => {
    const markdown = renderExample("status-report.json");
    expect(markdown).toContain(`## Next action\n\n${NO_NEXT_ACTION}\n`);
    expect(markdown).toContain("**Agent:** docs-agent · **Branch:** `docs/api-reference` · **Task:** T-031 · **Thread:** `@docs/api-reference#T-031`\n");
    expect(markdown).toContain("- **Missing fields** (`missing_fields`): Missing 1 core field: next\\_action.");
  });

  it("renders strings-only.json: the thread key as the title, a bare-string risk shown as medium with no severity given", () => {
    const markdown = renderExample("strings-only.json");
    expect(markdown.startsWith("# Handoff: `@chore/rename-settings`\n\n**Agent:** refactor-agent-3 · **Branch:**")).toBe(true);
    expect(markdown).toContain("| medium (no severity given) | two imports still use the old path in scripts/ |");
    expect(markdown).toContain("- Verification report: `outputs/verification/settings-rename.json`\n");
  });

  it("renders workbench-shape.json with its epoch timestamp as an ISO date", () => {
    const markdown = renderExample("workbench-shape.json");
    expect(markdown).toContain("**Task:** T-022 · **Created:** 2026-11-28T08:57:00.441Z · **Thread:** `task:T-022`\n");
    expect(markdown).toContain("## Next action\n\nopen a pull request for the settings page and request review from the web team\n");
    expect(markdown).not.toContain("## Open risks");
  });

  it.each(examplePacketNames())("%s: ends with one newline, keeps its tables whole and carries no syntax from the agent", (name) => {
    const markdown = renderExample(name);
    expect(markdown).toMatch(/[^\n]\n$/);
    expectTablesIntact(markdown);
    expectNoInjectedSyntax(markdown);
  });
});

describe("renderHandoffMarkdown: hostile content", () => {
  const HOSTILE_SUMMARY = [
    "Done. <script>alert(1)</script>",
    "[click](javascript:alert(1)) and ![x](https://evil.example/x.png)",
    "# Injected heading",
    "| a | b |",
    "|---|---|",
    "```",
    "Setext title",
    "===",
    "<img src=x onerror=alert(1)>",
    "&lt;b&gt; &#60;i&#62;",
    "[ref]: javascript:alert(1)",
    "    indented",
    "> [!WARNING]",
    "1. numbered",
  ].join("\n");

  function hostilePacket(): RenderHandoffInput {
    const base = example("full-v1.json").canonical;
    const canonical: CanonicalPacket = {
      ...base,
      topic: "Deploy ## <b>now</b>",
      agent: { name: "**bot**", kind: "<i>kind</i>" },
      branch: "feat/`x`",
      summary: HOSTILE_SUMMARY,
      next_action: {
        text: "run it\n## Not a section",
        command: "echo ```` done\n```\nrm -rf / # <script>",
        owner: "[me](javascript:alert(1))",
      },
      open_risks: [
        hostileRisk("r1", "low", "line one\nline two | with pipe\n\n- not a list"),
        hostileRisk("r2", "critical", "<img src=x onerror=alert(1)> `` code ``"),
        hostileRisk("r3", "medium", "ends with a backslash \\"),
        hostileRisk("r4", "info", "see https://x.example/?q=a|b or mail a@b.example"),
      ],
      questions_for_human: [
        { id: "q1", question: "Which?\n- injected item", options: ["1. first\n2. second", "<b>b</b>"], blocking: true, context: "ctx\n# h" },
      ],
      changed_files: [{ path: "a``b|c.ts", change: "<added>" }],
      commands_run: [{ command: "cat `x` | tee ```y```", exit_code: 2 }],
      failed_attempts: [{ attempt: "- tried\n- twice", reason: "*because*" }],
      preconditions: ["`", "x\ny"],
      clean_state: [{ check: "a\nb", detail: "![img](http://evil.example/x.png)" }],
      verdict_pointer: [
        { kind: "verification", ref: "javascript:alert(1)" },
        { kind: "review", ref: "data:text/html,<script>alert(1)</script>" },
        { kind: "other", ref: "https://ci.example.com/r?a=1&b=(2)" },
      ],
    };
    return { canonical, flags: [{ code: "dirty_state", reason: "problem: <b>x</b> [y](javascript:z)" }], threadKey: "t" };
  }

  const markdown = renderHandoffMarkdown(hostilePacket());

  it("adds no heading and no section", () => {
    expect(headings(markdown)).toEqual([
      "# Handoff: Deploy \\#\\# &lt;b&gt;now&lt;/b&gt;",
      "## Summary",
      "## Next action",
      "## Open risks",
      "## Questions for a person",
      "## Changed files",
      "## Commands run",
      "## Failed attempts",
      "## Assumptions to validate",
      "## Preconditions",
      "## Clean state problems",
      "## Verdict",
      "## Flags",
    ]);
  });

  it("leaves no raw HTML, no image, no agent-written entity and no link to another scheme", () => {
    expectNoInjectedSyntax(markdown);
    expect(markdown).toContain("Done. &lt;script&gt;alert(1)&lt;/script&gt;");
    // The URL is linked as itself (http is allowed); the image syntax around it stays text.
    expect(markdown).toContain("\\[click\\](javascript:alert(1)) and !\\[x\\]([https\\://evil.example/x.png](https://evil.example/x.png))");
    expect(markdown).toContain("&amp;lt;b&amp;gt; &amp;\\#60;i&amp;\\#62;");
  });

  it("escapes the start of every summary line", () => {
    const summary = markdown.split("## Summary\n\n")[1]?.split("\n\n## ")[0];
    expect(summary?.split("\n")).toEqual([
      "Done. &lt;script&gt;alert(1)&lt;/script&gt;",
      "\\[click\\](javascript:alert(1)) and !\\[x\\]([https\\://evil.example/x.png](https://evil.example/x.png))",
      "\\# Injected heading",
      "\\| a \\| b \\|",
      "\\|---\\|---\\|",
      "\\`\\`\\`",
      "Setext title",
      "\\===",
      "&lt;img src=x onerror=alert(1)&gt;",
      "&amp;lt;b&amp;gt; &amp;\\#60;i&amp;\\#62;",
      "\\[ref\\]: javascript:alert(1)",
      "indented",
      "&gt; \\[!WARNING\\]",
      "1\\. numbered",
    ]);
  });

  it("fences the next action's command with more backticks than it holds", () => {
    expect(markdown).toContain("`````sh\necho ```` done\n```\nrm -rf / # <script>\n`````\n");
    expect(markdown).toContain("run it\n\\#\\# Not a section\n");
    expect(markdown).toContain("**Owner:** \\[me\\](javascript:alert(1))");
  });

  it("keeps each risk on one table row, highest severity first", () => {
    expectTablesIntact(markdown);
    const rows = markdown.split("\n").filter((line) => line.startsWith("| ") && !line.startsWith("| Severity") && !line.startsWith("| ---"));
    expect(rows).toEqual([
      "| critical | &lt;img src=x onerror=alert(1)&gt; \\`\\` code \\`\\` |",
      "| medium | ends with a backslash \\\\ |",
      "| low | line one line two \\| with pipe - not a list |",
      "| info | see [https\\://x.example/?q=a\\|b](https://x.example/?q=a%7Cb) or mail a\\@b.example |",
    ]);
  });

  it("keeps every list item on its own line", () => {
    expect(markdown).toContain(
      "- **Blocking:** Which? - injected item\n  - Context: ctx \\# h\n  - Options:\n    1. 1\\. first 2. second\n    2. &lt;b&gt;b&lt;/b&gt;\n",
    );
    expect(markdown).toContain("## Changed files\n\n- ```a``b|c.ts``` (&lt;added&gt;)\n");
    expect(markdown).toContain("## Commands run\n\n- **Failed:** ```` cat `x` | tee ```y``` ````: exit 2\n");
    expect(markdown).toContain("## Failed attempts\n\n- \\- tried - twice: \\*because\\*\n");
    expect(markdown).toContain("## Preconditions\n\n- `` ` ``\n- `x y`\n");
    expect(markdown).toContain("## Clean state problems\n\n- `a b`: !\\[img\\]([http\\://evil.example/x.png](http://evil.example/x.png))\n");
  });

  it("links verdict pointers only when they are http(s), escaped for the link destination", () => {
    expect(markdown).toContain("- Verification report: `javascript:alert(1)`\n");
    expect(markdown).toContain("- Review report: `data:text/html,<script>alert(1)</script>`\n");
    expect(markdown).toContain("- Report: [https\\://ci.example.com/r?a=1&amp;b=(2)](https://ci.example.com/r?a=1&amp;b=\\(2\\))\n");
  });

  it("escapes the metadata and the flags' reasons", () => {
    expect(markdown).toContain("**Agent:** \\*\\*bot\\*\\* (&lt;i&gt;kind&lt;/i&gt;) · **Project:** acme/payments · **Branch:** `` feat/`x` ``");
    expect(markdown).toContain("- **Dirty workbench** (`dirty_state`): problem: &lt;b&gt;x&lt;/b&gt; \\[y\\](javascript:z)\n");
  });
});

describe("renderHandoffMarkdown: the human section", () => {
  const human: HumanSection = {
    revision: 3,
    updated_at: "2026-11-29T09:12:00Z",
    decision: { kind: "intervened", by: "mei", at: "2026-11-29T09:12:00Z", note: "stop <now>\n# please" },
    answers: [{ question_id: "q-dlq", question: "May I add the queue emulator?", answer: "Yes, *only* locally.", by: "mei", at: "2026-11-29T09:10:00Z" }],
    questions: [{ id: "h1", text: "Why was the migration reverted?", by: "mei", at: "2026-11-29T09:11:00Z", blocking: true }],
  };

  it("comes last, with the decision, the answers and the people's questions", () => {
    const markdown = renderHandoffMarkdown({ ...example("full-v1.json"), human });
    expect(markdown.endsWith(`## Decision and answers

**Intervened: address the questions below first** (mei, 2026-11-29T09:12:00Z)

stop &lt;now&gt;
\\# please

### Answers

- **Q:** May I add the queue emulator? **A:** Yes, \\*only\\* locally. (mei, 2026-11-29T09:10:00Z)

### Questions for the next session

- **Blocking:** Why was the migration reverted? (mei, 2026-11-29T09:11:00Z)
`)).toBe(true);
    expectNoInjectedSyntax(markdown);
  });

  it("is left out when absent or empty", () => {
    const empty: HumanSection = { revision: 0, updated_at: null, decision: null, answers: [], questions: [] };
    const without = renderExample("full-v1.json");
    expect(renderHandoffMarkdown({ ...example("full-v1.json"), human: empty })).toBe(without);
    expect(renderHandoffMarkdown({ ...example("full-v1.json"), human: null })).toBe(without);
    expect(without).not.toContain("Decision and answers");
  });
});

describe("renderHandoffMarkdown: determinism", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives the same bytes whatever the clock says", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2020-01-01T00:00:00Z"));
    const before = renderExample("full-v1.json", "pv_1");
    vi.setSystemTime(new Date("2031-06-30T12:00:00Z"));
    expect(renderExample("full-v1.json", "pv_1")).toBe(before);
  });

  it("renders a packet with only a summary: a title from the thread key and no empty sections", () => {
    const markdown = renderHandoffMarkdown({ canonical: { schema_version: 1, summary: "just this", extra: {} }, flags: [], threadKey: "k" });
    expect(markdown).toBe(`# Handoff: \`k\`\n\n**Thread:** \`k\`\n\n## Summary\n\njust this\n\n## Next action\n\n${NO_NEXT_ACTION}\n`);
  });
});
