import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";

/** Signature checks of code host deliveries, on the body's bytes as sent (docs/integrations.md#code-hosts). */

function equalInConstantTime(a: Buffer, b: Buffer): boolean {
  // timingSafeEqual needs equal lengths; a length mismatch tells an attacker nothing they did not send.
  return a.length === b.length && timingSafeEqual(a, b);
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the secret>`. */
export function verifyGithubSignature(secret: string, body: Buffer, header: string | null): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? "");
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  return equalInConstantTime(Buffer.from(match[1]!.toLowerCase(), "hex"), expected);
}

/** GitLab sends the shared secret itself in `X-Gitlab-Token`. */
export function verifyGitlabToken(secret: string, header: string | null): boolean {
  if (header === null) return false;
  return equalInConstantTime(Buffer.from(header, "utf8"), Buffer.from(secret, "utf8"));
}

/** What a test or a sender signs with: the header value GitHub would send. */
export function githubSignatureHeader(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}
