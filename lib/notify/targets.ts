import "server-only";
import { promises as dns, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where webhooks may post: public addresses, or what BATON_WEBHOOK_ALLOWED_TARGETS lists;
 * checked at creation and on every delivery's connection (docs/decisions/025-webhook-targets.md).
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** BATON_WEBHOOK_ALLOWED_TARGETS, parsed: host names (lower case, no trailing dot) and ranges (a single address is a /32 or /128). */
export interface WebhookAllowList {
  hosts: string[];
  ranges: [Address, number][];
}

export const NOTHING_ALLOWED: WebhookAllowList = { hosts: [], ranges: [] };

/** Resolves a host name to all its addresses (dns.lookup, as connections do); tests pass their own. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export const resolveWithDns: ResolveHost = (hostname) => dns.lookup(hostname, { all: true });

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A URL's host as compared: lower case, without IPv6 brackets or a trailing dot. */
export function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

/**
 * Parses the list's entries; a bad entry is named in the error (config.ts
 * prefixes the variable's name). Entries: a host name, an address or a CIDR range.
 */
export function parseAllowList(entries: readonly string[]): { allow: WebhookAllowList } | { problem: string } {
  const allow: WebhookAllowList = { hosts: [], ranges: [] };
  for (const entry of entries) {
    const value = normaliseHost(entry);
    if (value.includes("/")) {
      if (!ipaddr.isValidCIDR(value)) return { problem: badEntry(entry) };
      allow.ranges.push(ipaddr.parseCIDR(value));
    } else if (ipaddr.isValid(value)) {
      const address = ipaddr.process(value);
      allow.ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    } else if (HOST_NAME.test(value)) {
      allow.hosts.push(value);
    } else {
      return { problem: badEntry(entry) };
    }
  }
  return { allow };
}

const badEntry = (entry: string) =>
  `the entry "${entry}" is not a host name, an IP address or a CIDR range; list them separated by commas, e.g. hooks.internal,10.0.0.5,192.168.0.0/16`;

/** ipaddr.js's range names, as the messages say them. */
const RANGE_WORDS: Record<string, string> = {
  loopback: "loopback",
  private: "private",
  linkLocal: "link-local (cloud metadata)",
  uniqueLocal: "unique-local (private IPv6)",
  unspecified: "unspecified",
  carrierGradeNat: "carrier-grade NAT",
  multicast: "multicast",
  broadcast: "broadcast",
  reserved: "reserved",
};

/**
 * Why Baton may not connect to `address` for a URL whose host is `host`, or
 * null: public unicast addresses are allowed, and whatever the allow-list names
 * (the URL's host, the address, or a range holding it). An address that does
 * not parse is refused.
 */
export function addressProblem(address: string, host: string, allow: WebhookAllowList): string | null {
  if (allow.hosts.includes(normaliseHost(host))) return null;
  const text = normaliseHost(address);
  if (!ipaddr.isValid(text)) return "not an IP address";
  // process: an IPv4-mapped IPv6 address (::ffff:127.0.0.1) is the IPv4 address it maps.
  const parsed = ipaddr.process(text);
  if (allow.ranges.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits))) return null;
  const range = parsed.range();
  if (range === "unicast") return null;
  return `a ${RANGE_WORDS[range] ?? `special-purpose (${range})`} address`;
}

export function isAllowedAddress(address: string, host: string, allow: WebhookAllowList): boolean {
  return addressProblem(address, host, allow) === null;
}

const ALLOW_HINT =
  "webhooks post only to public addresses; to use a receiver on your own network, an operator lists its host, address or range in BATON_WEBHOOK_ALLOWED_TARGETS";

/** How long creation waits for a name to resolve; one that does not resolve in time is checked at delivery. */
const CREATION_LOOKUP_MS = 5_000;

/**
 * Why a webhook may not be created with `url` (already a valid http(s) URL),
 * or null. An IP literal is checked as it is; localhost and *.localhost are
 * refused unless listed; a name is resolved and refused if any of its
 * addresses is. A name that does not resolve (yet) is accepted: every
 * delivery checks again.
 */
export async function webhookTargetProblem(url: string, allow: WebhookAllowList, resolve: ResolveHost = resolveWithDns): Promise<string | null> {
  const host = normaliseHost(new URL(url).hostname);
  if (allow.hosts.includes(host)) return null;
  if (ipaddr.isValid(host)) {
    const problem = addressProblem(host, host, allow);
    return problem && `url must not point to ${problem}: ${ALLOW_HINT}`;
  }
  if (host === "localhost" || host.endsWith(".localhost")) return `url must not point to localhost: ${ALLOW_HINT}`;
  let addresses: LookupAddress[];
  try {
    addresses = await withTimeout(resolve(host), CREATION_LOOKUP_MS);
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address, host, allow);
    if (problem) return `url must not point to a host that resolves to ${problem}: ${ALLOW_HINT}`;
  }
  return null;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("lookup timed out")), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The error a refused connection fails with; its message is what the delivery log records (never the URL). */
export class RefusedTargetError extends Error {
  readonly code = "ERR_BATON_TARGET_REFUSED";
  constructor(problem: string, resolved: boolean) {
    super(`refused: the target ${resolved ? "resolves to" : "is"} ${problem}; BATON_WEBHOOK_ALLOWED_TARGETS can allow it`);
    this.name = "RefusedTargetError";
  }
}

/**
 * A `lookup` for http(s).request: resolves the name, and fails the connection
 * unless every address is allowed, so the addresses checked are the ones
 * connected to. (An IP-literal host is never looked up: check it before.)
 */
export function guardedLookup(host: string, allow: WebhookAllowList, resolve: ResolveHost = resolveWithDns): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        for (const { address } of addresses) {
          const problem = addressProblem(address, host, allow);
          if (problem) return callback(new RefusedTargetError(problem, true), "", 0);
        }
        const usable = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
        if (!usable.length) {
          return callback(Object.assign(new Error(`no address for the host`), { code: "ENOTFOUND" }), "", 0);
        }
        if (options.all) return callback(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}
