import type { LookupAddress } from "node:dns";
import { afterEach, describe, expect, it } from "vitest";
import { config } from "../server/config";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile, setAllowedWebhookTargets } from "@/testing/webhook-targets";
import { addressProblem, isAllowedAddress, NOTHING_ALLOWED, parseAllowList, type ResolveHost, type WebhookAllowList } from "./targets";
import { changeWebhook, createWebhook, deleteWebhook, listWebhooks } from "./webhooks";
import { newWebhookSchema } from "./dto";

/**
 * Webhook targets (docs/decisions/025-webhook-targets.md): loopback, private,
 * link-local and metadata addresses are refused at creation unless
 * BATON_WEBHOOK_ALLOWED_TARGETS lists them. Nothing here sends a request, and
 * host names are resolved by the tests' own resolver, never by a DNS server.
 */
freshDatabaseForThisFile();
// Nothing listed: what an install gets by default.
allowWebhookTargetsForThisFile("");

const lookups: string[] = [];
/** A resolver that answers from `table`; a name not in it does not resolve. */
function resolver(table: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    lookups.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}
const NO_NAMES = resolver({});

afterEach(async () => {
  lookups.length = 0;
  setAllowedWebhookTargets("");
  for (const webhook of await listWebhooks()) await deleteWebhook("ada", webhook.id);
});

const create = (url: string, resolve: ResolveHost = NO_NAMES) => createWebhook("ada", newWebhookSchema.parse({ name: "target", url, events: ["risk.critical"] }), { resolveHost: resolve });

async function expectRefused(url: string, resolve: ResolveHost = NO_NAMES) {
  const error = await expectBatonError(create(url, resolve), "invalid_request");
  expect(error.status).toBe(400);
  expect(error.details, url).toEqual({ fields: [{ field: "url", problem: expect.stringMatching(/^url must not point to .*BATON_WEBHOOK_ALLOWED_TARGETS/) }] });
  expect(error.message).toMatch(/^Bad webhook: url: url must not point to/);
  return error;
}

async function expectAccepted(url: string, resolve: ResolveHost = NO_NAMES) {
  const created = await create(url, resolve);
  expect(created.webhook.url).toBe(url);
  return created.webhook;
}

const allowList = (...entries: string[]): WebhookAllowList => {
  const parsed = parseAllowList(entries);
  if (!("allow" in parsed)) throw new Error(parsed.problem);
  return parsed.allow;
};

describe("at creation, with BATON_WEBHOOK_ALLOWED_TARGETS unset", () => {
  it("the URL parser already turns 2130706433 and 0x7f.1 into 127.0.0.1", () => {
    expect(new URL("http://2130706433/").hostname).toBe("127.0.0.1");
    expect(new URL("http://0x7f.1/").hostname).toBe("127.0.0.1");
    expect(new URL("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
  });

  it.each([
    "http://127.0.0.1/hook",
    "http://127.0.0.1:3000/api/v1/health",
    "http://localhost/hook",
    "http://LOCALHOST.:8080/hook",
    "http://admin.localhost/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://2130706433/hook",
    "http://0x7f.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/hook",
    "http://192.168.1.1/hook",
    "http://172.16.0.1/hook",
    "http://100.64.0.1/hook",
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[fd00::1]/hook",
    "http://[fe80::1]/hook",
    "https://[64:ff9b::7f00:1]/hook",
  ])("refuses %s with a 400 naming url, without looking anything up", async (url) => {
    await expectRefused(url);
    expect(lookups).toEqual([]);
  });

  it("says which kind of address was refused", async () => {
    expect((await expectRefused("http://169.254.169.254/")).message).toMatch(/link-local \(cloud metadata\) address/);
    expect((await expectRefused("http://[::ffff:127.0.0.1]/")).message).toMatch(/a loopback address/);
    expect((await expectRefused("http://10.0.0.1/")).message).toMatch(/a private address/);
  });

  it("accepts a public address", async () => {
    await expectAccepted("http://93.184.216.34/hook");
    await expectAccepted("https://[2606:2800:220:1:248:1893:25c8:1946]/hook");
    expect(lookups).toEqual([]);
  });

  it("resolves a host name: refused if any address is not public, accepted if all are, or if it does not resolve (delivery checks again)", async () => {
    const dns = resolver({
      "hooks.example.com": ["93.184.216.34"],
      "mixed.example.com": ["93.184.216.34", "10.0.0.1"],
      "metadata.example.com": ["169.254.169.254"],
      "v6.example.com": ["::1"],
    });
    await expectAccepted("https://hooks.example.com/hook", dns);
    expect((await expectRefused("https://mixed.example.com/hook", dns)).message).toMatch(/a host that resolves to a private address/);
    await expectRefused("https://metadata.example.com/hook", dns);
    await expectRefused("https://v6.example.com/hook", dns);
    await expectAccepted("https://not-yet.example.com/hook", dns);
    expect(lookups).toEqual(["hooks.example.com", "mixed.example.com", "metadata.example.com", "v6.example.com", "not-yet.example.com"]);
  });

  it("a change of URL is checked too", async () => {
    const webhook = await expectAccepted("http://93.184.216.34/hook");
    const error = await expectBatonError(changeWebhook("ada", webhook.id, { url: "http://169.254.169.254/" }, { resolveHost: NO_NAMES }), "invalid_request");
    expect(error.details).toEqual({ fields: [{ field: "url", problem: expect.stringMatching(/BATON_WEBHOOK_ALLOWED_TARGETS/) }] });
    expect(error.message).toMatch(/^Bad webhook change: url:/);
    expect((await listWebhooks()).map((row) => row.url)).toEqual(["http://93.184.216.34/hook"]);
    // Changing something else does not look at the URL again.
    await changeWebhook("ada", webhook.id, { name: "renamed" });
  });
});

describe("BATON_WEBHOOK_ALLOWED_TARGETS", () => {
  it.each<{ rule: string; allowed: string; dns: Record<string, string[]>; accepted: string[]; refused: string[] }>([
    {
      rule: "a CIDR range lets exactly its addresses through",
      allowed: "10.0.0.0/8",
      dns: { "11.0.0.1.nip.test": ["172.16.0.1"], "inside.test": ["10.9.9.9"] },
      accepted: ["http://10.0.0.1/hook", "http://10.200.3.4:8080/hook", "http://inside.test/hook"],
      refused: ["http://192.168.1.1/hook", "http://127.0.0.1/hook", "http://11.0.0.1.nip.test/hook"],
    },
    {
      rule: "an address lets exactly that address through, however the URL writes it",
      allowed: "127.0.0.1, fd00::1",
      dns: {},
      accepted: ["http://127.0.0.1:9000/hook", "http://[::ffff:127.0.0.1]/hook", "http://2130706433/hook", "http://0x7f.1/hook", "http://[fd00::1]/hook"],
      refused: ["http://127.0.0.2/hook", "http://[fd00::2]/hook", "http://localhost/hook"],
    },
    {
      rule: "a host name lets that name through, whatever it resolves to, and no other name resolving there",
      allowed: "hooks.internal,localhost",
      dns: { "hooks.internal": ["10.0.0.5"], "other.internal": ["10.0.0.5"] },
      accepted: ["http://HOOKS.internal:8080/hook", "http://localhost:4000/hook"],
      refused: ["http://other.internal/hook", "http://10.0.0.5/hook", "http://sub.localhost/hook"],
    },
  ])("$rule", async ({ allowed, dns, accepted, refused }) => {
    setAllowedWebhookTargets(allowed);
    for (const url of accepted) await expectAccepted(url, resolver(dns));
    for (const url of refused) await expectRefused(url, resolver(dns));
  });

  it("is parsed once with the environment; a bad entry stops it with a message naming the variable", () => {
    setAllowedWebhookTargets(" hooks.internal. , 10.0.0.0/8,[::1] ,192.168.1.7");
    const allow = config().BATON_WEBHOOK_ALLOWED_TARGETS;
    expect(allow.hosts).toEqual(["hooks.internal"]);
    expect(allow.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual(["10.0.0.0/8", "::1/128", "192.168.1.7/32"]);
    for (const bad of ["http://hooks.internal/", "10.0.0.0/33", "hooks internal", "hooks.internal:8080"]) {
      setAllowedWebhookTargets(`127.0.0.1,${bad}`);
      expect(() => config(), bad).toThrow(/BATON_WEBHOOK_ALLOWED_TARGETS: the entry ".*" is not a host name, an IP address or a CIDR range/);
    }
    setAllowedWebhookTargets(undefined);
    expect(config().BATON_WEBHOOK_ALLOWED_TARGETS).toEqual(NOTHING_ALLOWED);
  });
});

describe("isAllowedAddress", () => {
  it("allows public unicast addresses only", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:93.184.216.34"]) {
      expect(isAllowedAddress(address, "hooks.example.com", NOTHING_ALLOWED), address).toBe(true);
    }
    for (const address of [
      "127.0.0.1",
      "127.255.255.254",
      "::ffff:127.0.0.1",
      "::1",
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "172.31.255.255",
      "192.168.0.1",
      "169.254.169.254",
      "fe80::1",
      "fd00::1",
      "100.64.0.1",
      "224.0.0.1",
      "ff02::1",
      "255.255.255.255",
      "240.0.0.1",
      "192.0.2.1",
      "2001:db8::1",
      "64:ff9b::a00:1",
      "not an address",
    ]) {
      expect(isAllowedAddress(address, "hooks.example.com", NOTHING_ALLOWED), address).toBe(false);
    }
  });

  it("allows what the list names: a range, an address, or the URL's host", () => {
    const allow = allowList("10.0.0.0/8", "192.168.1.7", "receiver.lan");
    expect(isAllowedAddress("10.1.2.3", "a.test", allow)).toBe(true);
    expect(isAllowedAddress("::ffff:10.1.2.3", "a.test", allow)).toBe(true);
    expect(isAllowedAddress("192.168.1.7", "a.test", allow)).toBe(true);
    expect(isAllowedAddress("192.168.1.8", "a.test", allow)).toBe(false);
    expect(isAllowedAddress("127.0.0.1", "a.test", allow)).toBe(false);
    expect(isAllowedAddress("127.0.0.1", "Receiver.LAN.", allow)).toBe(true);
    expect(addressProblem("169.254.169.254", "a.test", allow)).toBe("a link-local (cloud metadata) address");
  });
});
