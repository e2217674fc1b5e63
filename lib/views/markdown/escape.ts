/**
 * Markdown escaping for text that agents wrote: whatever it holds, it stays text.
 * The output must keep its meaning under GitHub's renderer and plain CommonMark,
 * so escapes are limited to what both understand: backslash before ASCII
 * punctuation, and the three HTML entities.
 */

// Direction overrides and isolates can make a command read differently from what it runs ("Trojan Source").
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;
// C0 controls other than tab and line endings, and DEL: never meaningful in a handoff, often terminal noise.
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const LINE_BREAKS = /\r\n|[\r\n\u2028\u2029\u0085]/g;
const REPLACEMENT = "\ufffd";

/**
 * Inline constructs: emphasis (`*`, `_`), strikethrough (`~`), code (`` ` ``),
 * links, images and footnotes (`[`, `]`), table cells (`|`), math (`$`), heading
 * closers (`#`), and the backslash itself. `<`, `>` and `&` become entities instead.
 */
const INLINE_SPECIAL = /[\\`*_~[\]|$#]/g;

function cleanControls(text: string): string {
  return text.replace(BIDI_CONTROLS, REPLACEMENT).replace(CONTROL_CHARS, REPLACEMENT);
}

/** Line endings as `\n`, hostile invisible characters made visible. */
function normaliseText(text: string): string {
  return cleanControls(text.replace(LINE_BREAKS, "\n"));
}

/**
 * Plain text, linking nothing. GFM also links bare `http://`, `www.` and
 * e-mail addresses (as mailto:), and takes the escapes that follow into the
 * URL; an escape in each of those breaks the match.
 */
function escapePlain(text: string): string {
  return text
    .replace(INLINE_SPECIAL, (char) => `\\${char}`)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/:(?=\/\/)/g, "\\:")
    .replace(/(www)\./gi, "$1\\.")
    .replace(/@/g, "\\@");
}

// What GFM would link on its own, then trimmed as GFM trims it: trailing punctuation, an unbalanced ")".
const BARE_URL = /https?:\/\/[^\s<>]+/gi;

function trimUrl(candidate: string): string {
  let url = candidate;
  for (;;) {
    const last = url.at(-1);
    const unbalanced = last === ")" && url.split(")").length > url.split("(").length;
    if (!unbalanced && !/[.,:;!?'"*_~]/.test(last ?? "")) return url;
    url = url.slice(0, -1);
  }
}

/** Agent text with its http(s) URLs as links whose target is exactly the URL. */
function escapeInline(text: string): string {
  let out = "";
  let from = 0;
  for (const match of text.matchAll(BARE_URL)) {
    const url = trimUrl(match[0]);
    const destination = httpUrl(url);
    if (!destination) continue;
    // "!" right before a link would make it an image.
    const before = escapePlain(text.slice(from, match.index)).replace(/!$/, "\\!");
    out += `${before}[${escapePlain(url)}](${destination})`;
    from = match.index + url.length;
  }
  return out + escapePlain(text.slice(from));
}

/**
 * A line's start can open a block: a list (`-`, `+`, `1.`, `1)`), a thematic
 * break or setext underline (`-`, `=`), a table delimiter row (`:`). Leading
 * spaces are dropped so that four of them cannot open an indented code block.
 */
function escapeLineStart(line: string): string {
  return line
    .replace(/^[ \t]+/, "")
    .replace(/^([-+=:])/, "\\$1")
    .replace(/^(\d+)([.)])/, "$1\\$2");
}

const singleLine = (text: string): string =>
  normaliseText(text).replace(/[ \t]*\n[ \t\n]*/g, " ").replace(/\t/g, " ").trim();

/** Text for a single line: a heading, a list item, a table cell, a metadata value. */
export function inlineText(text: string): string {
  return escapeLineStart(escapeInline(singleLine(text)));
}

/** Text that may span lines: each line stays a line, blank lines separate paragraphs. */
export function blockText(text: string): string {
  const lines = normaliseText(text)
    .split("\n")
    .map((line) => escapeLineStart(escapeInline(line.trimEnd())));
  return lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

const longestBacktickRun = (text: string): number =>
  Math.max(0, ...Array.from(text.matchAll(/`+/g), (match) => match[0].length));

/**
 * An inline code span: its content is shown as written (no escapes apply
 * inside one), so the delimiter is one backtick longer than any run inside.
 */
export function codeSpan(text: string): string {
  const content = cleanControls(text.replace(LINE_BREAKS, " ").replace(/\t/g, " "));
  if (content.trim() === "") return "(empty)";
  const fence = "`".repeat(longestBacktickRun(content) + 1);
  // A span strips one space from each side when both are there, and a backtick at an edge would join the fence.
  const pad = content.startsWith("`") || content.endsWith("`") || (content.startsWith(" ") && content.endsWith(" "));
  return pad ? `${fence} ${content} ${fence}` : `${fence}${content}${fence}`;
}

/** A fenced code block whose fence no line of the content can close. */
export function codeBlock(text: string, info = ""): string {
  const content = normaliseText(text).replace(/\n+$/, "");
  const fence = "`".repeat(Math.max(3, longestBacktickRun(content) + 1));
  return `${fence}${info}\n${content}\n${fence}`;
}

/** The link target when `ref` is an absolute http(s) URL, else null. */
export function httpUrl(ref: string): string | null {
  const trimmed = ref.trim();
  if (!/^https?:\/\//i.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  // URL.href percent-encodes spaces, quotes and angle brackets; a destination still reads parentheses,
  // backslashes and entity references, so those are escaped without changing the URL. A pipe would end a
  // table cell and a backtick could open code, so those two are percent-encoded.
  return url.href
    .replace(/[()\\]/g, (char) => `\\${char}`)
    .replace(/&/g, "&amp;")
    .replace(/\|/g, "%7C")
    .replace(/`/g, "%60");
}

/** A link when `ref` is an http(s) URL, else the reference as code; never any other scheme. */
export function linkOrCode(ref: string): string {
  const url = httpUrl(ref);
  // The URL parser drops line breaks inside a URL; the link text must not keep them either.
  return url ? `[${escapePlain(singleLine(ref))}](${url})` : codeSpan(ref);
}

/** One table row; every cell is single-line text with its pipes escaped. */
export function tableRow(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}
