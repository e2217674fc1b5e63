import ipaddr from "ipaddr.js";
import { BatonError } from "../core/errors";

/**
 * Which Host a request may name (decision 030). DNS rebinding points a name the
 * attacker owns at Baton's address: the browser then sends `Host: evil.example`.
 * With BATON_ALLOWED_HOSTS set, such a request is refused before any handler
 * runs (421 Misdirected Request). Loopback names always pass.
 */

/** One allowed host: a lowercase name (IPv6 in brackets) and, when given, its port. */
export interface AllowedHost {
  name: string;
  port: string | null;
}

const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

/** Splits `name[:port]` (IPv6 as `[::1]:3000`); null when it is not one. */
export function splitHost(value: string): AllowedHost | null {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value.trim().toLowerCase());
  if (!match) return null;
  const name = (match[1] ?? "").replace(/\.$/, "");
  if (!HOST_NAME.test(name) && !IPV6.test(name)) return null;
  return { name, port: match[2] ?? null };
}

/** BATON_ALLOWED_HOSTS entries, checked at start (lib/server/config.ts). */
export function parseAllowedHosts(entries: readonly string[]): { hosts: AllowedHost[] } | { problem: string } {
  const hosts: AllowedHost[] = [];
  for (const entry of entries) {
    const host = splitHost(entry);
    if (!host) {
      return { problem: `"${entry.slice(0, 100)}" is not a host name with an optional port; list names such as baton.example.com,baton.example.com:8443` };
    }
    hosts.push(host);
  }
  return { hosts };
}

/** localhost (and *.localhost), 127.0.0.0/8 and [::1]: names that only ever reach this machine. */
export function isLoopbackName(name: string): boolean {
  return name === "localhost" || name.endsWith(".localhost") || /^127(?:\.\d{1,3}){3}$/.test(name) || name === "[::1]";
}

/** Whether `value` (a Host header) is a loopback name, with any port. */
export function isLoopbackHost(value: string): boolean {
  const host = splitHost(value);
  return host !== null && isLoopbackName(host.name);
}

/** A peer address (X-Forwarded-For entry, socket address) on this machine. */
export function isLoopbackAddress(address: string): boolean {
  const value = address.trim().replace(/^\[|\]$/g, "");
  // ipaddr.js's ranges, as for webhook targets: ::ffff:127.0.0.1 is judged as 127.0.0.1.
  return ipaddr.isValid(value) && ipaddr.process(value).range() === "loopback";
}

/** Every host a request names: Host (or the URL's when there is none) and each X-Forwarded-Host entry. */
export function namedHosts(request: Request): string[] {
  const hosts = [request.headers.get("host") ?? new URL(request.url).host];
  const forwarded = request.headers.get("x-forwarded-host");
  if (forwarded) hosts.push(...forwarded.split(",").map((entry) => entry.trim()));
  return hosts;
}

export function isAllowedHost(value: string, allowed: readonly AllowedHost[]): boolean {
  const host = splitHost(value);
  if (!host) return false;
  if (isLoopbackName(host.name)) return true;
  return allowed.some((entry) => entry.name === host.name && (entry.port === null || entry.port === host.port));
}

/**
 * The refusal for a request naming a host not in `allowed`, or null when it may
 * proceed. An empty list allows any host (first-run setup stays loopback-or-code).
 */
export function hostRefusal(request: Request, allowed: readonly AllowedHost[]): BatonError | null {
  if (!allowed.length) return null;
  const refused = namedHosts(request).find((host) => !isAllowedHost(host, allowed));
  if (refused === undefined) return null;
  return new BatonError(
    "misdirected_request",
    `This Baton does not answer to the host "${refused.slice(0, 100)}"; use one of the names in BATON_ALLOWED_HOSTS.`,
    { host: refused.slice(0, 100) },
  );
}
