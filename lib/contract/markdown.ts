import { parse as parseYaml, YAMLError } from "yaml";
import { BatonError } from "../core/errors";
import { put, RECEIVED_MARKDOWN_KEY, type MappedFormat } from "./aliases";
import { JSON_MAX_DEPTH } from "./schema";
import { normaliseSeverity } from "./severity";

/**
 * A Markdown handoff (HumanLayer's create_handoff, HANDOFF.md, HANDOVER.md) read into a packet
 * under the names lib/contract/aliases.ts maps (docs/contract.md#markdown-handoffs). Headings
 * are read line by line, never rendered; the text is kept verbatim in the packet. The section
 * titles Baton reads, after lower-casing and dropping numbering and punctuation:
 */
const SECTION_FIELDS: Record<string, readonly string[]> = {
  summary: ["summary", "session summary", "overview", "task", "tasks", "what was done", "work done", "current state", "status", "current status", "progress"],
  next_steps: ["next steps", "next step", "action items", "action items and next steps", "next actions", "todo", "to do", "whats next", "remaining work"],
  open_questions: ["open questions", "questions", "questions for human", "unresolved questions"],
  blockers: ["blockers", "blocked", "blocked on", "blocking issues"],
  open_risks: ["risks", "open risks", "known risks", "known issues", "concerns"],
  failed_attempts: ["failed attempts", "what didnt work", "what did not work", "dead ends"],
  changed_files: ["recent changes", "changed files", "files changed", "files modified", "modified files", "changes"],
  commands_run: ["commands run", "commands"],
  decisions: ["decisions", "key decisions"],
  artifacts: ["artifacts"],
};
const FIELD_BY_TITLE = new Map(Object.entries(SECTION_FIELDS).flatMap(([field, titles]) => titles.map((title) => [title, field] as const)));

/** Front-matter keys of create_handoff that the contract spells differently. */
const FRONT_MATTER_RENAMES = new Map([["date", "created_at"], ["researcher", "agent"], ["author", "agent"], ["repository", "repo"]]);

export const FRONT_MATTER_MAX_BYTES = 64 * 1024;
/** A YAML alias may be expanded this often: more is a billion-laughs document, not a handoff. */
const FRONT_MATTER_MAX_ALIASES = 50;
const PLACEHOLDER = /^(none|n\/a|na|nothing|-|—|tbd)\.?$/i;

function invalid(problem: string): BatonError {
  return new BatonError("invalid_markdown", `The Markdown handoff was not read: ${problem}.`, { problem });
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > JSON_MAX_DEPTH || value === null || typeof value !== "object") return depth;
  let deepest = depth + 1;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, depth + 1));
  return deepest;
}

/** The front matter's own line 1 is the file's line 2 (after the opening ---). */
const lineAt = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

function readFrontMatter(text: string): { data: Record<string, unknown> | null; body: string } {
  const opening = /^---[ \t]*\r?\n/.exec(text);
  if (!opening) return { data: null, body: text };
  const closing = /^(?:---|\.\.\.)[ \t]*$/m;
  const rest = text.slice(opening[0].length);
  const end = closing.exec(rest);
  if (!end) throw invalid("the front matter opened by --- on the first line is never closed by a line ---");
  const yaml = rest.slice(0, end.index);
  if (new TextEncoder().encode(yaml).length > FRONT_MATTER_MAX_BYTES) throw invalid(`the front matter is larger than ${FRONT_MATTER_MAX_BYTES} bytes`);
  let data: unknown;
  try {
    data = parseYaml(yaml, { maxAliasCount: FRONT_MATTER_MAX_ALIASES, uniqueKeys: true, prettyErrors: false });
  } catch (error) {
    // The code and line, never the parser's message: it quotes the input.
    if (error instanceof YAMLError) throw invalid(`the front matter is not valid YAML (${error.code} at line ${lineAt(yaml, error.pos[0]) + 1})`);
    if (error instanceof ReferenceError) throw invalid(`the front matter expands YAML aliases more than ${FRONT_MATTER_MAX_ALIASES} times`);
    throw error;
  }
  if (data !== null && (typeof data !== "object" || Array.isArray(data))) throw invalid("the front matter is not a YAML mapping of keys to values");
  if (depthOf(data) > JSON_MAX_DEPTH) throw invalid(`the front matter nests deeper than ${JSON_MAX_DEPTH} levels`);
  return { data: (data ?? {}) as Record<string, unknown>, body: rest.slice(end.index + end[0].length) };
}

interface Section {
  level: number;
  title: string;
  /** The heading's line and the line after the section's last. */
  start: number;
  end: number;
  lines: string[];
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;

/** ATX headings outside fenced code, each with the lines up to the next heading at its level or above. */
function readSections(body: string): { title: string | null; sections: Section[] } {
  const headings: { level: number; title: string; line: number }[] = [];
  const lines = body.split(/\r?\n/);
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const marker = FENCE.exec(line)?.[1];
    if (marker) fence = fence === null ? marker : fence === marker ? null : fence;
    else if (fence === null) {
      const match = HEADING.exec(line);
      if (match) headings.push({ level: match[1]!.length, title: match[2]!, line: index });
    }
  });
  const sections = headings.map((heading, index) => {
    const end = headings.slice(index + 1).find((other) => other.level <= heading.level)?.line ?? lines.length;
    return { level: heading.level, title: heading.title, start: heading.line, end, lines: lines.slice(heading.line + 1, end) };
  });
  const first = headings[0];
  return { title: first && first.level === 1 ? first.title : null, sections };
}

function fieldFor(title: string): string | undefined {
  const key = title
    .toLowerCase()
    .replace(/\(s\)/g, "s")
    .replace(/&/g, " and ")
    .replace(/[^\p{L}\p{N} ]+/gu, "")
    .replace(/^\d+\s+/, "")
    .replace(/\s+/g, " ")
    .trim();
  return FIELD_BY_TITLE.get(key);
}

const LIST_ITEM = /^(\s*)(?:[-*+]|\d+[.)])[ \t]+(.*)$/;

/** The section's list items (continuation and nested lines joined to their item), else its paragraphs. */
function itemsOf(lines: string[]): { text: string; done: boolean }[] {
  const items: { text: string; done: boolean }[] = [];
  let topIndent: number | null = null;
  let fence = false;
  for (const line of lines) {
    if (FENCE.test(line)) {
      fence = !fence;
      continue;
    }
    const match = fence ? null : LIST_ITEM.exec(line);
    const indent = match ? match[1]!.replace(/\t/g, "    ").length : 0;
    if (match && (topIndent === null || indent <= topIndent + 1)) {
      topIndent ??= indent;
      const checkbox = /^\[([ xX])\][ \t]+/.exec(match[2]!);
      items.push({ text: checkbox ? match[2]!.slice(checkbox[0].length) : match[2]!, done: checkbox?.[1]?.toLowerCase() === "x" });
    } else if (line.trim() && items.length && topIndent !== null) {
      const last = items[items.length - 1]!;
      last.text = `${last.text} ${(match ? match[2]! : line).trim()}`;
    }
  }
  if (items.length) return items.map((item) => ({ ...item, text: item.text.trim() })).filter((item) => item.text && !PLACEHOLDER.test(item.text));
  return paragraphs(lines).map((text) => ({ text, done: false }));
}

function paragraphs(lines: string[]): string[] {
  return lines
    .join("\n")
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph && !PLACEHOLDER.test(paragraph));
}

/** `**High**: text`, `[high] text`, `High - text`: a known severity word in front. */
function withSeverity(text: string): { severity?: string; detail: string } {
  const match = /^\*{0,2}\[?([A-Za-z0-9]+)\]?\*{0,2}[ \t]*(?:[:)\]—–-][ \t]*|[ \t]+(?=\S))(.*)$/s.exec(text);
  if (match && normaliseSeverity(match[1]).known && match[2]!.trim()) return { severity: match[1]!.toLowerCase(), detail: match[2]!.trim() };
  return { detail: text };
}

const stripTicks = (text: string) => text.replace(/^`+|`+$/g, "").trim();

/** `path/to/file.ts:12-40 - what changed`: the path (without line numbers) and the rest. */
function changedFile(text: string): { path: string; change?: string } | null {
  const match = /^(?:`([^`]+)`|(\S+))[ \t]*[:—–-]?[ \t]*(.*)$/s.exec(text);
  const raw = (match?.[1] ?? match?.[2] ?? "").replace(/:\d+(?:[-–]\d+)?$/, "").replace(/:$/, "");
  if (!/^[\w.@~\/+-]+$/.test(raw) || !/[\/.]/.test(raw) || /^\.+$/.test(raw)) return null;
  const change = match?.[3]?.trim();
  return change ? { path: raw, change } : { path: raw };
}

/** Each line of a fenced block (without a `$ ` prompt), then the list items outside blocks. */
function commandsOf(lines: string[]): string[] {
  const fenced: string[] = [];
  const outside: string[] = [];
  let inFence = false;
  for (const line of lines) {
    if (FENCE.test(line)) inFence = !inFence;
    else if (inFence) fenced.push(line.trim().replace(/^\$[ \t]+/, ""));
    else outside.push(line);
  }
  return [...fenced, ...itemsOf(outside).map((item) => stripTicks(item.text))].filter(Boolean);
}

function sectionValue(field: string, section: Section): unknown {
  switch (field) {
    case "summary":
      return section.lines.join("\n").trim() || undefined;
    case "next_steps":
      return itemsOf(section.lines).filter((item) => !item.done).map((item) => item.text);
    case "blockers":
    case "open_risks":
      return itemsOf(section.lines).map((item) => withSeverity(item.text));
    case "changed_files":
      return itemsOf(section.lines).map((item) => changedFile(item.text)).filter((file) => file !== null);
    case "commands_run":
      return commandsOf(section.lines);
    default:
      return itemsOf(section.lines).map((item) => item.text);
  }
}

/**
 * Reads a Markdown handoff into a packet: front-matter keys as they are (a few create_handoff
 * names renamed), recognised sections by title, the text itself under `received_markdown`.
 * Throws `invalid_markdown` naming what is wrong when the front matter cannot be read or no
 * part of the document maps to the contract.
 */
export function markdownToPacket(text: string): Record<string, unknown> {
  const { data, body } = readFrontMatter(text.replace(/^\uFEFF/, ""));
  const packet: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    const renamed = FRONT_MATTER_RENAMES.get(key);
    put(packet, renamed && !Object.hasOwn(data!, renamed) ? renamed : key, value);
  }
  const { title, sections } = readSections(body);
  const taken = new Set<Section>();
  for (const section of sections) {
    const field = fieldFor(section.title);
    // A section inside one already read belongs to it.
    const inside = [...taken].some((outer) => outer.start < section.start && section.start < outer.end);
    if (!field || inside || Object.hasOwn(packet, field)) continue;
    const value = sectionValue(field, section);
    if (value === undefined || (Array.isArray(value) && !value.length)) continue;
    put(packet, field, value);
    taken.add(section);
  }
  if (!Object.hasOwn(packet, "summary") && title) put(packet, "summary", title.replace(/^hand(?:off|over)\s*[:—–-]\s*/i, "").trim() || title);
  if (!taken.size && !Object.hasOwn(packet, "summary")) {
    throw invalid(
      `it has no section Baton reads (headings such as "## Summary", "## Next steps", "## Open questions", "## Blockers") and no title`,
    );
  }
  const format: MappedFormat = data === null ? "markdown_sections" : "markdown_front_matter";
  put(packet, RECEIVED_MARKDOWN_KEY, { format, text });
  return packet;
}
