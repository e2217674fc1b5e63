/**
 * bench:redact: Baton's own secret patterns (lib/contract/secrets.ts) against secretlint's
 * maintained rule set (@secretlint/secretlint-rule-preset-recommend via @secretlint/core),
 * on the same corpus, in this process (no server, no database).
 *
 * The corpus: every fake secret of testing/fake-secrets.ts (seeds 21 and 22, as in
 * testing/hardening/redaction-corpus.test.ts), each placed in an ordinary packet (a shared
 * example packet with the secret's text in its summary, a command and an unknown field),
 * and the ordinary packets themselves (testing/fixtures/examples and the demo fleet,
 * cli/demo/fleet.ts) for false positives. For each packet:
 *   - ours: redactSecrets(packet) (what ingest runs); caught when the secret is gone;
 *   - secretlint: lintSource on the packet's keys and strings, unescaped, one per line; caught
 *     when a reported range covers the secret; it only reports, replacing is not timed;
 *   - both: caught by either.
 * Prints per-packet cost (median and p95 over BENCH_REPEAT rounds, in microseconds),
 * the cost ratio, the corpus kinds each catches (and which kinds only one catches),
 * and the false positives on ordinary packets. Writes bench/results/redact-latest.json.
 * The figures and the decision they led to: docs/decisions/035-redaction-corpus-and-rule-set.md.
 *
 * Env: BENCH_REPEAT (5). Exit: 0 measured, 1 could not run.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { demoFleetPackets } from "../cli/demo/fleet";
import { EXAMPLE_PACKETS } from "../testing/hardening/packet-arbitraries";
import { fakeSecrets, type FakeSecret } from "../testing/fake-secrets";
import { redactSecrets } from "../lib/contract/secrets";
import { percentile } from "./lib/load";
import { fixed, formatTable, gitRevision, positiveNumber, writeJson } from "./lib/report";
import { ROOT } from "./lib/server";

const REPEAT = positiveNumber("BENCH_REPEAT", 5, true);
const CONFIG: Parameters<typeof lintSource>[0]["options"]["config"] = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };

interface Case {
  packet: Record<string, unknown>;
  secret?: FakeSecret;
}

const corpus: FakeSecret[] = [...fakeSecrets(21), ...fakeSecrets(22)];
const ordinary = [...EXAMPLE_PACKETS, ...demoFleetPackets(Date.UTC(2026, 0, 1))];
const withSecrets: Case[] = corpus.map((secret, i) => {
  const base = EXAMPLE_PACKETS[i % EXAMPLE_PACKETS.length]!;
  return { secret, packet: { ...base, summary: `${String(base.summary ?? "")} ${secret.text}`, commands_run: [secret.text], x_env: { VALUE: secret.text } } };
});
const cases: Case[] = [...withSecrets, ...ordinary.map((packet) => ({ packet }))];

/** What secretlint scans: every key and string of the packet, unescaped, one after another (a PEM keeps its line breaks). */
function scanned(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) scanned(item, out);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      out.push(key);
      scanned(item, out);
    }
  }
  return out;
}
const pretty = (packet: unknown) => scanned(packet).join("\n");

function oursCatches(item: Case): { caught: boolean; hits: number } {
  const result = redactSecrets(item.packet);
  return { caught: item.secret ? !JSON.stringify(result.value).includes(item.secret.secret) : false, hits: result.count };
}

async function secretlintCatches(item: Case): Promise<{ caught: boolean; hits: number }> {
  const content = pretty(item.packet);
  const result = await lintSource({ source: { content, filePath: "/handoff.txt", ext: ".txt", contentType: "text" }, options: { config: CONFIG, noPhysicFilePath: true } });
  if (!item.secret) return { caught: false, hits: result.messages.length };
  // Caught when every place the secret appears is inside a reported range.
  const needle = item.secret.secret;
  const places: number[] = [];
  for (let at = content.indexOf(needle); at >= 0 && places.length < 100; at = content.indexOf(needle, at + 1)) places.push(at);
  const covered = (at: number) => result.messages.some((message) => message.range[0] <= at + needle.length && message.range[1] >= at);
  return { caught: places.length > 0 && places.every(covered), hits: result.messages.length };
}

async function timeEach(run: (item: Case) => unknown): Promise<number[]> {
  const perPacketUs: number[] = [];
  for (let round = 0; round < REPEAT; round++) {
    const started = performance.now();
    for (const item of cases) await run(item);
    perPacketUs.push(((performance.now() - started) * 1000) / cases.length);
  }
  return perPacketUs;
}

async function main(): Promise<void> {
  // Warm-up: both compile their patterns once.
  for (const item of cases.slice(0, 10)) {
    oursCatches(item);
    await secretlintCatches(item);
  }
  const ours = await timeEach((item) => redactSecrets(item.packet));
  const theirs = await timeEach((item) => lintSource({ source: { content: pretty(item.packet), filePath: "/handoff.txt", ext: ".txt", contentType: "text" }, options: { config: CONFIG, noPhysicFilePath: true } }));

  const byLabel = new Map<string, { kind: string; ours: number; theirs: number; both: number; total: number }>();
  let oursFalse = 0;
  let theirsFalse = 0;
  const theirsFalseKinds = new Set<string>();
  for (const item of cases) {
    const a = oursCatches(item);
    const b = await secretlintCatches(item);
    if (!item.secret) {
      oursFalse += a.hits;
      theirsFalse += b.hits;
      if (b.hits) {
        const result = await lintSource({ source: { content: pretty(item.packet), filePath: "/handoff.txt", ext: ".txt", contentType: "text" }, options: { config: CONFIG, noPhysicFilePath: true } });
        for (const message of result.messages) theirsFalseKinds.add(message.messageId);
      }
      continue;
    }
    const row = byLabel.get(item.secret.label) ?? { kind: item.secret.kind, ours: 0, theirs: 0, both: 0, total: 0 };
    row.total++;
    if (a.caught) row.ours++;
    if (b.caught) row.theirs++;
    if (a.caught || b.caught) row.both++;
    byLabel.set(item.secret.label, row);
  }
  const kinds = [...byLabel.entries()];
  const whole = (pick: (row: { ours: number; theirs: number; both: number; total: number }) => number) => kinds.filter(([, row]) => pick(row) === row.total).length;
  const oursKinds = whole((row) => row.ours);
  const theirsKinds = whole((row) => row.theirs);
  const bothKinds = whole((row) => row.both);
  const onlyTheirs = kinds.filter(([, row]) => row.theirs === row.total && row.ours < row.total).map(([label]) => label);
  const onlyOurs = kinds.filter(([, row]) => row.ours === row.total && row.theirs < row.total).map(([label]) => label);
  const neither = kinds.filter(([, row]) => row.both < row.total).map(([label]) => label);

  const median = (values: number[]) => percentile(Float64Array.from(values).sort(), 50);
  const p95 = (values: number[]) => percentile(Float64Array.from(values).sort(), 95);
  console.log(`bench:redact at ${gitRevision()}: ${withSecrets.length} packets with a secret (${kinds.length} kinds), ${ordinary.length} ordinary packets, ${REPEAT} rounds\n`);
  console.log(
    formatTable(
      ["", "per packet, median (µs)", "p95 (µs)", "cost vs ours", "kinds caught", "secrets caught", "false positives"],
      [
        ["ours (lib/contract/secrets.ts)", fixed(median(ours), 1), fixed(p95(ours), 1), "1.00", `${oursKinds}/${kinds.length}`, `${kinds.reduce((n, [, row]) => n + row.ours, 0)}/${withSecrets.length}`, String(oursFalse)],
        ["secretlint preset-recommend", fixed(median(theirs), 1), fixed(p95(theirs), 1), fixed(median(theirs) / median(ours), 2), `${theirsKinds}/${kinds.length}`, `${kinds.reduce((n, [, row]) => n + row.theirs, 0)}/${withSecrets.length}`, String(theirsFalse)],
        ["both (either catches)", fixed(median(ours) + median(theirs), 1), "", fixed((median(ours) + median(theirs)) / median(ours), 2), `${bothKinds}/${kinds.length}`, `${kinds.reduce((n, [, row]) => n + row.both, 0)}/${withSecrets.length}`, String(oursFalse + theirsFalse)],
      ],
    ),
  );
  console.log(`\nkinds only secretlint catches whole: ${onlyTheirs.join(", ") || "none"}`);
  console.log(`kinds only ours catches whole (${onlyOurs.length}): ${onlyOurs.join(", ") || "none"}`);
  console.log(`kinds neither catches whole: ${neither.join(", ") || "none"}`);
  if (theirsFalse) console.log(`secretlint's reports on ordinary packets: ${[...theirsFalseKinds].join(", ")}`);

  writeJson(path.join(ROOT, "bench", "results", "redact-latest.json"), {
    revision: gitRevision(),
    repeat: REPEAT,
    packets: { with_secret: withSecrets.length, ordinary: ordinary.length },
    per_packet_us: { ours: { median: median(ours), p95: p95(ours) }, secretlint: { median: median(theirs), p95: p95(theirs) } },
    kinds: { total: kinds.length, ours: oursKinds, secretlint: theirsKinds, both: bothKinds, only_secretlint: onlyTheirs, only_ours: onlyOurs, neither },
    false_positives: { ours: oursFalse, secretlint: theirsFalse, secretlint_kinds: [...theirsFalseKinds] },
    by_kind: Object.fromEntries(kinds),
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
