/**
 * Characters a person cannot see or that reorder what they see: bidirectional controls,
 * zero-width and other invisible characters, and control characters. One definition for
 * the packet checks (identity fields refuse them) and the pages (agent text shows them):
 * docs/decisions/034-agent-text.md.
 */
export const INVISIBLE_SET =
  "[\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u115f\\u1160\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\u3164\\ufeff\\uffa0]";

const SPLITTER = new RegExp(`(${INVISIBLE_SET})`, "u");
const INVISIBLE = new RegExp(INVISIBLE_SET, "u");

/** The first invisible character of `text` as U+XXXX, or null. */
export function invisibleCharacter(text: string): string | null {
  const found = INVISIBLE.exec(text)?.[0];
  return found === undefined ? null : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Names of the characters people are most likely to meet, for a marker's tooltip. */
const NAMES: Record<number, string> = {
  0x0009: "CHARACTER TABULATION",
  0x000a: "LINE FEED",
  0x000d: "CARRIAGE RETURN",
  0x001b: "ESCAPE",
  0x00ad: "SOFT HYPHEN",
  0x061c: "ARABIC LETTER MARK",
  0x200b: "ZERO WIDTH SPACE",
  0x200c: "ZERO WIDTH NON-JOINER",
  0x200d: "ZERO WIDTH JOINER",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2060: "WORD JOINER",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
  0xfeff: "ZERO WIDTH NO-BREAK SPACE",
};

/** "U+202E". */
export function codePointLabel(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

export type TextPart =
  | { kind: "text"; text: string }
  /** A character that would be invisible or reorder the text: shown as `marker`, explained by `title`. */
  | { kind: "invisible"; code: string; marker: string; title: string };

/**
 * Cuts agent-provided text into plain runs and the invisible characters between them, so
 * that a page can show each such character as a visible marker (⟨U+202E⟩) instead of
 * letting it hide or reorder text. `multiline` keeps line feeds and tabs as they are
 * (text shown with white-space: pre-wrap); everywhere else they are marked too.
 */
export function revealInvisible(text: string, { multiline = false }: { multiline?: boolean } = {}): TextPart[] {
  const parts: TextPart[] = [];
  let plain = "";
  // Split with a capturing group: even entries are plain runs, odd ones single invisible characters.
  for (const [index, piece] of text.split(SPLITTER).entries()) {
    if (index % 2 === 0 || (multiline && (piece === "\n" || piece === "\t"))) {
      plain += piece;
      continue;
    }
    if (plain) parts.push({ kind: "text", text: plain });
    plain = "";
    const code = codePointLabel(piece);
    const name = NAMES[piece.codePointAt(0)!];
    parts.push({ kind: "invisible", code, marker: `⟨${code}⟩`, title: name ? `${code} ${name}` : `${code} (an invisible or control character)` });
  }
  if (plain) parts.push({ kind: "text", text: plain });
  return parts;
}

/** The text as a page shows it: every invisible character replaced by its marker. */
export function visibleText(text: string, options?: { multiline?: boolean }): string {
  return revealInvisible(text, options)
    .map((part) => (part.kind === "text" ? part.text : part.marker))
    .join("");
}
