import "server-only";
import { config } from "../server/config";
import { hostRefusal } from "./hosts";

/**
 * THE host check (decision 030): proxy.ts runs it for every page and the API
 * paths it matches; the API's route wrappers (lib/http/route.ts) and the routes
 * without one run it too, so that the ingest endpoint, which stays free of the
 * proxy hop, is covered. /api/v1/health alone is exempt (load balancers probe it
 * by address; it answers `{"ok":true}` and nothing else).
 */
export function assertAllowedHost(request: Request): void {
  const refusal = hostRefusal(request, config().BATON_ALLOWED_HOSTS);
  if (refusal) throw refusal;
}
