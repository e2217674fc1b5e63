/**
 * GET|POST /api/v1/health: answers without touching the database or the body.
 * Load balancers probe it; bench:ingest uses it as the empty-handler baseline.
 * It alone skips the BATON_ALLOWED_HOSTS check: probes use an address, and it tells nothing (decision 030).
 */
function healthy(): Response {
  return new Response('{"ok":true}', { headers: { "content-type": "application/json", "cache-control": "no-store" } });
}
export const GET = healthy;
export const POST = healthy;
