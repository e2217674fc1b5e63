import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { computeEtag, conditionalJsonResponse, etagMatches } from "./etag";

const sha256 = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("computeEtag", () => {
  it("is the quoted SHA-256 hex of the bytes; a string counts as its UTF-8 bytes", () => {
    expect(computeEtag("")).toBe(`"${sha256("")}"`);
    expect(computeEtag('{"a":1}')).toMatch(/^"[0-9a-f]{64}"$/);
    const text = '{"summary":"ünïcødé 🚀"}';
    expect(computeEtag(text)).toBe(computeEtag(new TextEncoder().encode(text)));
    expect(computeEtag(text)).toBe(`"${sha256(Buffer.from(text, "utf8"))}"`);
  });

  it("changes with any byte, including key order and whitespace", () => {
    expect(computeEtag('{"a":1,"b":2}')).not.toBe(computeEtag('{"b":2,"a":1}'));
    expect(computeEtag('{"a":1}')).not.toBe(computeEtag('{"a": 1}'));
  });
});

describe("etagMatches", () => {
  const etag = computeEtag("body");
  const opaque = etag.slice(1, -1);
  const other = computeEtag("other");

  it("matches the same tag, strong or weak (If-None-Match compares weakly)", () => {
    expect(etagMatches(etag, etag)).toBe(true);
    expect(etagMatches(`W/${etag}`, etag)).toBe(true);
    expect(etagMatches(`  ${etag}  `, etag)).toBe(true);
  });

  it("matches when any tag of a list does", () => {
    expect(etagMatches(`${other}, ${etag}`, etag)).toBe(true);
    expect(etagMatches(`${other},W/${etag}`, etag)).toBe(true);
    expect(etagMatches(`W/"x",\t${etag} ,"y"`, etag)).toBe(true);
    expect(etagMatches(`, ${other}, , ${etag},`, etag)).toBe(true);
    expect(etagMatches(`${other}, W/"x"`, etag)).toBe(false);
  });

  it("matches * alone", () => {
    expect(etagMatches("*", etag)).toBe(true);
    expect(etagMatches(" * ", etag)).toBe(true);
  });

  it("does not match a missing, empty, different or unquoted tag", () => {
    expect(etagMatches(null, etag)).toBe(false);
    expect(etagMatches(undefined, etag)).toBe(false);
    expect(etagMatches("", etag)).toBe(false);
    expect(etagMatches(other, etag)).toBe(false);
    expect(etagMatches(opaque, etag)).toBe(false);
    expect(etagMatches(`"${opaque.slice(0, 16)}"`, etag)).toBe(false);
    expect(etagMatches(`"${opaque.toUpperCase()}"`, etag)).toBe(false);
    expect(etagMatches(`w/${etag}`, etag)).toBe(false);
  });

  it("reads commas inside a tag as part of it", () => {
    expect(etagMatches('"a,b"', '"a,b"')).toBe(true);
    expect(etagMatches('"a,b"', '"a"')).toBe(false);
    expect(etagMatches('"x", "a,b"', '"a,b"')).toBe(true);
  });

  it("ignores a malformed header rather than guessing", () => {
    expect(etagMatches(`${etag} ${etag}`, etag)).toBe(false);
    expect(etagMatches(`${etag}, *`, etag)).toBe(false);
    expect(etagMatches(`"${opaque}`, etag)).toBe(false);
    expect(etagMatches(`${etag}, "unterminated`, etag)).toBe(false);
    expect(etagMatches(`${etag}; q=1`, etag)).toBe(false);
  });

  it("compares with a weak current tag too", () => {
    expect(etagMatches(etag, `W/${etag}`)).toBe(true);
  });
});

describe("conditionalJsonResponse", () => {
  const body = { summary: "ünïcødé", list: [1, "two", null], human: { revision: 0 } };
  const get = (headers: Record<string, string> = {}) => new Request("http://baton.test/x", { headers });

  it("serves the JSON with a strong ETag of the exact bytes and Cache-Control: no-cache", async () => {
    const response = conditionalJsonResponse(get(), body, { "baton-packet-id": "pv_1" });
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes)).toBe(JSON.stringify(body));
    expect(response.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("baton-packet-id")).toBe("pv_1");
  });

  it("answers a matching If-None-Match with 304, the validators and no body", async () => {
    const etag = conditionalJsonResponse(get(), body).headers.get("etag")!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
      const response = conditionalJsonResponse(get({ "if-none-match": ifNoneMatch }), body, { "baton-packet-id": "pv_1" });
      expect(response.status, ifNoneMatch).toBe(304);
      expect(response.headers.get("etag")).toBe(etag);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(response.headers.get("baton-packet-id")).toBe("pv_1");
      expect(response.body).toBeNull();
      expect(await response.text()).toBe("");
    }
  });

  it("serves the body again once the content changes", async () => {
    const etag = conditionalJsonResponse(get(), body).headers.get("etag")!;
    const changed = { ...body, human: { revision: 1 } };
    const response = conditionalJsonResponse(get({ "if-none-match": etag }), changed);
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).not.toBe(etag);
    expect(await response.json()).toEqual(changed);
  });
});
