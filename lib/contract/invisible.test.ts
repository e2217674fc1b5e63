import { describe, expect, it } from "vitest";
import { invisibleCharacter } from "./validate";
import { revealInvisible, visibleText } from "./invisible";

describe("revealInvisible", () => {
  it("leaves ordinary text alone, whatever its script", () => {
    expect(revealInvisible("fix the build · مرحبا · שלום")).toEqual([{ kind: "text", text: "fix the build · مرحبا · שלום" }]);
    expect(revealInvisible("")).toEqual([]);
  });

  it("marks a right-to-left override and a zero-width space, with their names", () => {
    expect(revealInvisible("invoice\u202Egnp.exe\u200B")).toEqual([
      { kind: "text", text: "invoice" },
      { kind: "invisible", code: "U+202E", marker: "⟨U+202E⟩", title: "U+202E RIGHT-TO-LEFT OVERRIDE" },
      { kind: "text", text: "gnp.exe" },
      { kind: "invisible", code: "U+200B", marker: "⟨U+200B⟩", title: "U+200B ZERO WIDTH SPACE" },
    ]);
  });

  it("marks every bidi control, zero-width character and C0/C1 control", () => {
    const hidden = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0xfeff, 0x00, 0x07, 0x1b, 0x7f, 0x85, 0x9f];
    for (const point of hidden) {
      const character = String.fromCodePoint(point);
      expect(visibleText(`a${character}b`), point.toString(16)).toBe(`a⟨U+${point.toString(16).toUpperCase().padStart(4, "0")}⟩b`);
    }
  });

  it("keeps line feeds and tabs in multi-line text, and marks them in a single line", () => {
    expect(visibleText("one\n\ttwo", { multiline: true })).toBe("one\n\ttwo");
    expect(visibleText("one\n\ttwo")).toBe("one⟨U+000A⟩⟨U+0009⟩two");
    expect(visibleText("a\rb", { multiline: true })).toBe("a⟨U+000D⟩b");
  });

  it("names an unlisted character generically", () => {
    expect(revealInvisible("\u3164")).toEqual([{ kind: "invisible", code: "U+3164", marker: "⟨U+3164⟩", title: "U+3164 (an invisible or control character)" }]);
  });

  it("marks exactly what the packet checks refuse in identity fields (one definition)", () => {
    for (let point = 0; point <= 0xffff; point += 1) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const character = String.fromCodePoint(point);
      expect(visibleText(character) !== character, point.toString(16)).toBe(invisibleCharacter(character) !== null);
    }
  });
});
