import { describe, expect, it } from "vitest";
import { blockText, codeBlock, codeSpan, httpUrl, inlineText, linkOrCode, tableRow } from "./escape";
import { itTransforms } from "@/testing/text-cases";

describe("inlineText", () => {
  itTransforms(inlineText, [
    ["turns <, > and & into entities, so no HTML and no entity survives", [["<script>alert(1)</script> & &lt;b&gt;", "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &amp;lt;b&amp;gt;"]]],
    ["backslash-escapes the inline constructs", [["*a* _b_ ~c~ `d` [e](f) ![g](h) |i| $j$ #k \\l", "\\*a\\* \\_b\\_ \\~c\\~ \\`d\\` \\[e\\](f) !\\[g\\](h) \\|i\\| \\$j\\$ \\#k \\\\l"]]],
    ["escapes what would open a block at the start of the line, and drops leading spaces", [["- item", "\\- item"], ["+ item", "\\+ item"], ["1. item", "1\\. item"], ["2) item", "2\\) item"], ["=====", "\\====="], [":--", "\\:--"], ["    indented code", "indented code"], ["> quote", "&gt; quote"], ["# heading", "\\# heading"]]],
    ["leaves ordinary punctuation alone inside a line", [["a-b, c.d (e) 1. f + g = h: i!", "a-b, c.d (e) 1. f + g = h: i!"]]],
    ["puts every kind of line break onto one line", [["one\r\ntwo\rthree\nfour\u2028five\u2029six\u0085seven", "one two three four five six seven"], ["a  \n\n  - b", "a - b"]]],
    ["makes control and direction-override characters visible", [["a\u0000b\u001b[31mc\u202ed", "a\ufffdb\ufffd\\[31mc\ufffdd"]]],
  ]);
});

describe("URLs inside agent text", () => {
  itTransforms(inlineText, [
    ["links an http(s) URL to exactly itself, leaving trailing punctuation and an unbalanced ) outside", [["see https://x.example/a_b#c_d.", "see [https\\://x.example/a\\_b\\#c\\_d](https://x.example/a_b#c_d)."], ["(docs: http://x.example/Foo_(bar))", "(docs: [http\\://x.example/Foo\\_(bar)](http://x.example/Foo_\\(bar\\)))"]]],
    ["never lets a link become an image", [["!https://evil.example/x.png", "\\![https\\://evil.example/x.png](https://evil.example/x.png)"]]],
    ["keeps GFM from linking anything else on its own: www., e-mail, mailto:, other schemes", [["www.example.com a@b.example mailto:a@b.example ftp://x.example javascript:alert(1)", "www\\.example.com a\\@b.example mailto:a\\@b.example ftp\\://x.example javascript:alert(1)"]]],
  ]);

  it("percent-encodes a pipe or backtick in the destination, so a table cell and code stay whole", () => {
    expect(httpUrl("https://x.example/?q=a|b`c")).toBe("https://x.example/?q=a%7Cb%60c");
  });
});

describe("blockText", () => {
  it("keeps lines and paragraphs, and escapes the start of every line", () => {
    expect(blockText("first\n# not a heading\n\n\n\n- not a list\n===\n    not code")).toBe(
      "first\n\\# not a heading\n\n\\- not a list\n\\===\nnot code",
    );
  });
});

describe("codeSpan", () => {
  itTransforms(codeSpan, [
    ["uses a fence one longer than any backtick run inside", [["npm test", "`npm test`"], ["a`b", "``a`b``"], ["a```b", "````a```b````"]]],
    ["pads when the content starts or ends with a backtick, or with spaces on both sides", [["`x", "`` `x ``"], [" x ", "`  x  `"]]],
    ["keeps the content as written, on one line", [["a <b> & *c*\nd", "`a <b> & *c* d`"]]],
  ]);
});

describe("codeBlock", () => {
  it("uses a fence of at least three, longer than any run inside", () => {
    expect(codeBlock("ls", "sh")).toBe("```sh\nls\n```");
    expect(codeBlock("echo ````\n```\n", "sh")).toBe("`````sh\necho ````\n```\n`````");
  });
});

describe("httpUrl and linkOrCode", () => {
  it("links only absolute http and https URLs", () => {
    expect(httpUrl("https://ci.example.com/r/1")).toBe("https://ci.example.com/r/1");
    expect(httpUrl(" HTTP://Example.com ")).toBe("http://example.com/");
    for (const ref of ["javascript:alert(1)", "data:text/html,<b>x</b>", "vbscript:x", "//evil.example", "outputs/v.json", "http:evil", "mailto:a@b.c", "https://"]) {
      expect(httpUrl(ref), ref).toBeNull();
    }
  });

  it("escapes what a link destination would still read", () => {
    expect(httpUrl("https://x.example/a_(b)?q=1&r=<2>")).toBe("https://x.example/a_\\(b\\)?q=1&amp;r=%3C2%3E");
  });

  it("writes other references as code", () => {
    expect(linkOrCode("javascript:alert(1)")).toBe("`javascript:alert(1)`");
    expect(linkOrCode("https://x.example/[a]")).toBe("[https\\://x.example/\\[a\\]](https://x.example/[a])");
    // The URL parser accepts a line break inside a URL (and drops it); the link text stays on one line.
    expect(linkOrCode("https://x.example/a\n# b")).toBe("[https\\://x.example/a \\# b](https://x.example/a#%20b)");
  });
});

describe("tableRow", () => {
  it("joins cells between pipes", () => {
    expect(tableRow(["a", inlineText("b|c")])).toBe("| a | b\\|c |");
  });
});
