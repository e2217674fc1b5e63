/**
 * The security headers of every response (decision 022). Pure strings, no Next
 * or database imports: proxy.ts (per-request page policy) and next.config.ts
 * (static headers) both read them.
 */

/** A fresh, unguessable nonce for one page response: 128 random bits, base64. */
export function createNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

const joinDirectives = (directives: Record<string, readonly string[]>) =>
  Object.entries(directives)
    .map(([name, sources]) => [name, ...sources].join(" "))
    .join("; ");

/**
 * The policy of an HTML page: scripts only with this response's nonce, so markup in agent text
 * could never run; each directive's reason is in docs/decisions/022-content-security-policy.md.
 */
export function pageContentSecurityPolicy(nonce: string, { development = false } = {}): string {
  return joinDirectives({
    "default-src": ["'self'"],
    // next dev's React rebuilds server error stacks with eval; never in production.
    "script-src": ["'self'", `'nonce-${nonce}'`, "'strict-dynamic'", "'report-sample'", ...(development ? ["'unsafe-eval'"] : [])],
    // The dev overlay injects <style> elements without the nonce; with a nonce present
    // 'unsafe-inline' would be ignored, so development drops the nonce for styles.
    "style-src": development ? ["'self'", "'unsafe-inline'"] : ["'self'", `'nonce-${nonce}'`, "'report-sample'"],
    "style-src-attr": ["'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
  });
}

/**
 * The policy of everything that is not a page (API answers, the handoff.json and
 * handoff.md downloads): if a browser ever showed one as a document, nothing in
 * it may load, run or be framed.
 */
export const NON_PAGE_CONTENT_SECURITY_POLICY = joinDirectives({
  "default-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'none'"],
  "frame-ancestors": ["'none'"],
  sandbox: [],
});

/** On every response: no MIME sniffing (agent text served as text stays text), no full URLs to other sites. */
export const STATIC_SECURITY_HEADERS: readonly { key: string; value: string }[] = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "same-origin" },
];

/** The thread page's downloads (`/threads/<key>/handoff.json`, `.../handoff.md`). */
export const isThreadDownloadPath = (pathname: string): boolean => /^\/threads\/[^/]+\/handoff\.(json|md)$/.test(pathname);
