import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { githubSignatureHeader, verifyGithubSignature, verifyGitlabToken } from "./signature";

describe("GitHub signatures", () => {
  const secret = "It's a Secret to Everybody";
  const body = Buffer.from("Hello, World!");

  it("match GitHub's published example, in either case of hex", () => {
    // docs.github.com, "Validating webhook deliveries": this secret and payload give this signature.
    const published = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    expect(githubSignatureHeader(secret, body)).toBe(published);
    expect(verifyGithubSignature(secret, body, published)).toBe(true);
    expect(verifyGithubSignature(secret, body, published.toUpperCase().replace("SHA256=", "sha256="))).toBe(true);
  });

  it("refuse another secret, another body, a missing, truncated or unprefixed header", () => {
    const good = githubSignatureHeader(secret, body);
    expect(verifyGithubSignature("another secret", body, good)).toBe(false);
    expect(verifyGithubSignature(secret, Buffer.from("Hello, World?"), good)).toBe(false);
    expect(verifyGithubSignature(secret, body, null)).toBe(false);
    expect(verifyGithubSignature(secret, body, good.slice(0, -2))).toBe(false);
    expect(verifyGithubSignature(secret, body, good.slice("sha256=".length))).toBe(false);
    expect(verifyGithubSignature(secret, body, `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`)).toBe(false);
  });

  it("are computed on the bytes as sent: a body re-encoded differently does not verify", () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    const header = githubSignatureHeader(secret, withBom);
    expect(verifyGithubSignature(secret, withBom, header)).toBe(true);
    expect(verifyGithubSignature(secret, Buffer.from(new TextDecoder().decode(withBom)), header)).toBe(false);
  });
});

describe("GitLab tokens", () => {
  it("must equal the secret exactly", () => {
    expect(verifyGitlabToken("s3cret-token", "s3cret-token")).toBe(true);
    expect(verifyGitlabToken("s3cret-token", "s3cret-tokeN")).toBe(false);
    expect(verifyGitlabToken("s3cret-token", "s3cret-token ")).toBe(false);
    expect(verifyGitlabToken("s3cret-token", null)).toBe(false);
  });
});
