import { describe, expect, it } from "vitest";
import { createNonce, isThreadDownloadPath, NON_PAGE_CONTENT_SECURITY_POLICY, pageContentSecurityPolicy } from "./security-headers";

/** The directive's sources, or null when the policy has no such directive. */
function directive(policy: string, name: string): string[] | null {
  const found = policy
    .split(";")
    .map((part) => part.trim().split(/\s+/))
    .find(([directiveName]) => directiveName === name);
  return found ? found.slice(1) : null;
}

describe("pageContentSecurityPolicy", () => {
  const nonce = "bm9uY2Utb2YtdGhlLXRlc3Q=";

  it("lets scripts run only with the response's nonce in production: no 'unsafe-inline', no 'unsafe-eval'", () => {
    const policy = pageContentSecurityPolicy(nonce);
    expect(directive(policy, "script-src")).toEqual(["'self'", `'nonce-${nonce}'`, "'strict-dynamic'", "'report-sample'"]);
    expect(policy).not.toContain("'unsafe-eval'");
    expect(directive(policy, "script-src")).not.toContain("'unsafe-inline'");
  });

  it("allows 'unsafe-eval' for scripts only in development", () => {
    expect(directive(pageContentSecurityPolicy(nonce, { development: true }), "script-src")).toEqual([
      "'self'",
      `'nonce-${nonce}'`,
      "'strict-dynamic'",
      "'report-sample'",
      "'unsafe-eval'",
    ]);
  });

  it("sends nothing to other hosts: images, connections, fonts and the fallback are this origin's", () => {
    const policy = pageContentSecurityPolicy(nonce);
    expect(directive(policy, "default-src")).toEqual(["'self'"]);
    expect(directive(policy, "img-src")).toEqual(["'self'", "data:"]);
    expect(directive(policy, "connect-src")).toEqual(["'self'"]);
    expect(directive(policy, "font-src")).toEqual(["'self'"]);
    expect(directive(policy, "form-action")).toEqual(["'self'"]);
  });

  it("forbids plugins, <base> and being framed", () => {
    const policy = pageContentSecurityPolicy(nonce);
    expect(directive(policy, "object-src")).toEqual(["'none'"]);
    expect(directive(policy, "base-uri")).toEqual(["'none'"]);
    expect(directive(policy, "frame-ancestors")).toEqual(["'none'"]);
  });

  it("allows style attributes (React's style props) but <style> elements only with the nonce in production", () => {
    const policy = pageContentSecurityPolicy(nonce);
    expect(directive(policy, "style-src")).toEqual(["'self'", `'nonce-${nonce}'`, "'report-sample'"]);
    expect(directive(policy, "style-src-attr")).toEqual(["'unsafe-inline'"]);
  });

  it("allows inline <style> elements in development only, where the dev overlay adds them without the nonce", () => {
    expect(directive(pageContentSecurityPolicy(nonce, { development: true }), "style-src")).toEqual(["'self'", "'unsafe-inline'"]);
  });

  it("is one header line", () => {
    expect(pageContentSecurityPolicy(nonce)).not.toMatch(/[\r\n]/);
  });
});

describe("createNonce", () => {
  it("is 128 random bits in base64, different every time", () => {
    const nonces = Array.from({ length: 100 }, createNonce);
    for (const value of nonces) {
      expect(value).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(Buffer.from(value, "base64")).toHaveLength(16);
    }
    expect(new Set(nonces).size).toBe(nonces.length);
  });
});

describe("NON_PAGE_CONTENT_SECURITY_POLICY", () => {
  it("loads and runs nothing, and sandboxes the document", () => {
    expect(directive(NON_PAGE_CONTENT_SECURITY_POLICY, "default-src")).toEqual(["'none'"]);
    expect(directive(NON_PAGE_CONTENT_SECURITY_POLICY, "frame-ancestors")).toEqual(["'none'"]);
    expect(directive(NON_PAGE_CONTENT_SECURITY_POLICY, "sandbox")).toEqual([]);
  });
});

describe("isThreadDownloadPath", () => {
  it("matches the two downloads of a thread, whatever its (encoded) key", () => {
    expect(isThreadDownloadPath("/threads/acme%2Fapi/handoff.json")).toBe(true);
    expect(isThreadDownloadPath("/threads/k/handoff.md")).toBe(true);
  });

  it("does not match the thread page or other files", () => {
    expect(isThreadDownloadPath("/threads/handoff.md")).toBe(false);
    expect(isThreadDownloadPath("/threads/k")).toBe(false);
    expect(isThreadDownloadPath("/threads/k/handoff.txt")).toBe(false);
    expect(isThreadDownloadPath("/threads/a/b/handoff.md")).toBe(false);
    expect(isThreadDownloadPath("/threads/k/handoff.md/x")).toBe(false);
  });
});
