import "server-only";
import { constants } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import type { CanonicalPacket } from "../../contract/canonical";
import { inlineVerdictFailure, REVIEW_PASS_TOTAL } from "../../contract/lint";
import { describeJsonError } from "../../contract/validate";
import { redactSecrets } from "../../contract/secrets";
import { readAtMost } from "../../server/fs/read-regular-file";
import {
  verdictReadingDto,
  type VerdictPointerReadingDto,
  type VerdictReadingDto,
  type VerdictSummaryDto,
} from "./dto";
import { parseReport } from "./reports";
import { checkRef, errorCode, isInside, MISSING, REFUSAL, resolveInsideRoot } from "./safe-path";

export { verdictReadingDto, type VerdictReadingDto } from "./dto";

export type VerdictPointer = NonNullable<CanonicalPacket["verdict_pointer"]>[number];
export type InlineVerdict = CanonicalPacket["verdict"];

export interface ReadVerdictOptions {
  /** The packet's own verdict (canonical.verdict), combined into the summary. */
  inlineVerdict?: InlineVerdict;
  /** Larger report files are "invalid" without being parsed. */
  maxBytes?: number;
  /** Reports sent with the packet, by pointer path (stored redacted): read when the workspace has none. */
  attached?: ReadonlyMap<string, string>;
}

export const VERDICT_FILE_MAX_BYTES = 1024 * 1024;
export const VERDICT_NOT_SENT = "verdict not sent";
export const NO_ROOT_REASON = `${VERDICT_NOT_SENT}: no report came with the packet and no workspace holds it (baton push attaches them; a watched folder or BATON_WORKSPACE_ROOTS gives a workspace)`;

// Two letters or more, so a Windows drive ("C:") is left to the path checks as absolute.
const URL_SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]+):/;
const LINK_SCHEMES = new Set(["http", "https"]);

/**
 * Reads every verdict pointer of a packet version: http(s) URLs become links,
 * relative paths are read from the first root that holds them, never from outside.
 */
export async function readVerdict(
  pointers: readonly VerdictPointer[] | undefined,
  roots: readonly string[],
  options: ReadVerdictOptions = {},
): Promise<VerdictReadingDto> {
  const maxBytes = options.maxBytes ?? VERDICT_FILE_MAX_BYTES;
  const readings = await Promise.all(
    (pointers ?? []).map(async (pointer) => {
      const reading = await readPointer(pointer, roots, maxBytes);
      const attached = options.attached?.get(pointer.ref);
      // The workspace's file is the newer word; a report sent with the packet stands in when there is none.
      if (attached === undefined || (reading.status !== "missing" && reading.status !== "no_root")) return reading;
      return { kind: pointer.kind, ref: pointer.ref, ...parseAttached(pointer, attached) };
    }),
  );
  return verdictReadingDto.parse({
    pointers: readings,
    summary: summariseVerdict(readings, options.inlineVerdict),
    read_at: new Date().toISOString(),
  });
}

async function readPointer(
  pointer: VerdictPointer,
  roots: readonly string[],
  maxBytes: number,
): Promise<VerdictPointerReadingDto> {
  const base = { kind: pointer.kind, ref: pointer.ref };
  const scheme = URL_SCHEME.exec(pointer.ref);
  if (scheme) return readLink(base, scheme[1]!.toLowerCase());
  const check = checkRef(pointer.ref);
  if (!check.ok) return { ...base, status: "refused", reason: check.reason };
  if (!roots.length) return { ...base, status: "no_root", reason: NO_ROOT_REASON };

  let missingReason: string = MISSING.root;
  for (const root of roots) {
    const resolved = await resolveInsideRoot(root, pointer.ref);
    if (resolved.ok) return { ...base, ...(await readReportFile(pointer, resolved, maxBytes)) };
    if (resolved.code !== "missing") {
      return { ...base, status: resolved.code === "refused" ? "refused" : "invalid", reason: resolved.reason };
    }
    if (resolved.reason === MISSING.file) missingReason = MISSING.file;
  }
  return { ...base, status: "missing", reason: missingReason };
}

function readLink(base: Pick<VerdictPointerReadingDto, "kind" | "ref">, scheme: string): VerdictPointerReadingDto {
  if (!LINK_SCHEMES.has(scheme)) return { ...base, status: "refused", reason: `unsupported link scheme ${scheme}:` };
  let url: URL;
  try {
    url = new URL(base.ref);
  } catch {
    return { ...base, status: "refused", reason: "malformed URL" };
  }
  if (!url.hostname) return { ...base, status: "refused", reason: "malformed URL" };
  return { ...base, status: "link", url: url.href };
}

type FileReading = Omit<VerdictPointerReadingDto, "kind" | "ref">;

async function readReportFile(
  pointer: VerdictPointer,
  resolved: { path: string; root: string },
  maxBytes: number,
): Promise<FileReading> {
  const opened = await readReportBytes(resolved, maxBytes);
  return "bytes" in opened ? parseReportBytes(pointer, opened.bytes) : opened;
}

/** A report file's bytes, read with every check above; or why it was not read. */
async function readReportBytes(resolved: { path: string; root: string }, maxBytes: number): Promise<{ bytes: Buffer } | FileReading> {
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: the checked path has no symlinks; one appearing since is refused.
    // O_NONBLOCK: a FIFO planted in the workspace must not hang the page.
    handle = await fs.open(resolved.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ELOOP") return { status: "refused", reason: REFUSAL.symlinkOutside };
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing", reason: MISSING.file };
    return { status: "invalid", reason: code === "EACCES" ? "permission denied" : `cannot be read (${code ?? "unknown error"})` };
  }
  try {
    if (!(await openedInside(handle, resolved))) return { status: "refused", reason: REFUSAL.symlinkOutside };
    const stat = await handle.stat();
    if (!stat.isFile()) return { status: "invalid", reason: "not a regular file" };
    // A hard link made inside the workspace can name any file of the same file system.
    if (stat.nlink > 1) return { status: "refused", reason: REFUSAL.hardLink };
    const tooLarge: FileReading = { status: "invalid", reason: `larger than ${describeBytes(maxBytes)}` };
    if (stat.size > maxBytes) return tooLarge;
    const bytes = await readAtMost(handle, maxBytes + 1, stat.size);
    if (bytes.length > maxBytes) return tooLarge;
    return { bytes };
  } finally {
    await handle.close();
  }
}

/**
 * A report to send with a packet (`baton push`): the JSON a relative pointer names inside
 * the workspace root, read with the server's checks (decision 012), or why not.
 */
export async function readReportToSend(root: string, ref: string, maxBytes: number): Promise<{ ok: true; json: unknown } | { ok: false; reason: string }> {
  if (URL_SCHEME.test(ref)) return { ok: false, reason: "a link is not read" };
  const check = checkRef(ref);
  if (!check.ok) return { ok: false, reason: check.reason };
  const resolved = await resolveInsideRoot(root, ref);
  if (!resolved.ok) return { ok: false, reason: resolved.reason };
  const opened = await readReportBytes(resolved, maxBytes);
  if (!("bytes" in opened)) return { ok: false, reason: opened.reason ?? opened.status };
  try {
    return { ok: true, json: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(opened.bytes)) };
  } catch {
    return { ok: false, reason: "not UTF-8 JSON" };
  }
}

/**
 * What was opened is still inside the root: a folder swapped for a symlink between
 * the realpath check and the open is caught here.
 */
async function openedInside(handle: FileHandle, resolved: { path: string; root: string }): Promise<boolean> {
  try {
    return isInside(resolved.root, await fs.readlink(`/proc/self/fd/${handle.fd}`));
  } catch {
    // No /proc (not Linux): the opened file must be the one the check resolved.
    const [opened, checked] = await Promise.all([handle.stat(), fs.stat(resolved.path).catch(() => null)]);
    return checked !== null && opened.dev === checked.dev && opened.ino === checked.ino;
  }
}

function parseReportBytes(pointer: VerdictPointer, bytes: Buffer): FileReading {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { status: "invalid", reason: "not UTF-8 text" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { status: "invalid", reason: `not valid JSON: ${describeJsonError(error)}` };
  }
  // Report files are agent text too: secrets in them never reach a page (decision 020).
  const parsed = parseReport(pointer.kind, redactSecrets(json).value);
  return parsed.ok ? { status: "ok", report: parsed.report, from: "workspace" } : { status: "invalid", reason: parsed.reason };
}

/** A report sent with the packet: stored redacted, parsed as a file's would be. */
function parseAttached(pointer: VerdictPointer, json: string): FileReading {
  const parsed = parseReport(pointer.kind, JSON.parse(json));
  return parsed.ok ? { status: "ok", report: parsed.report, from: "attached" } : { status: "invalid", reason: `sent with the packet: ${parsed.reason}` };
}

/** V8 quotes a piece of the file in its message; a non-report file's content must not reach the page. */
function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * The card's badge: fail when any report read (or the inline verdict) fails;
 * missing when nothing could be read and there is no inline verdict; else pass.
 * Pointers that could not be read are listed in the reasons either way.
 */
export function summariseVerdict(readings: readonly VerdictPointerReadingDto[], inline?: InlineVerdict): VerdictSummaryDto {
  const failures: string[] = [];
  const passes: string[] = [];
  const unread: string[] = [];
  for (const reading of readings) {
    const report = reading.status === "ok" ? reading.report : undefined;
    if (!report) {
      unread.push(
        reading.status === "link"
          ? `${reading.kind} ${reading.ref} is a link; open it to see the verdict`
          : reading.status === "no_root"
            ? `${reading.kind} ${reading.ref}: ${VERDICT_NOT_SENT}`
            : `${reading.kind} ${reading.ref}: ${reading.status}${reading.reason ? ` - ${reading.reason}` : ""}`,
      );
    } else if (report.type === "verification") {
      const counts = report.findings.filter((group) => group.count > 0).map((group) => `${group.count} ${group.severity}`);
      const detail = counts.length ? ` (findings: ${counts.join(", ")})` : "";
      (report.passed ? passes : failures).push(`verification ${reading.ref} ${report.passed ? "passed" : "did not pass"}${detail}`);
    } else if (report.passed) {
      passes.push(`review ${reading.ref}: pass, ${report.total}/10`);
    } else {
      const why = [report.verdict !== "pass" ? `verdict ${report.verdict}` : null, report.total < REVIEW_PASS_TOTAL ? `total ${report.total}/10 is below ${REVIEW_PASS_TOTAL}` : null];
      failures.push(`review ${reading.ref}: ${why.filter(Boolean).join(", ")}`);
    }
  }
  const inlineFailure = inlineVerdictFailure(inline);
  if (inlineFailure) failures.push(`inline verdict: ${inlineFailure}`);
  if (failures.length) return { state: "fail", reasons: [...failures, ...unread] };
  if (!passes.length && !inline) {
    return { state: "missing", reasons: readings.length ? unread : ["no verdict pointer"] };
  }
  if (inline) passes.push("inline verdict: passed");
  return { state: "pass", reasons: [...passes, ...unread] };
}
