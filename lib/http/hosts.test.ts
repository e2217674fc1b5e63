import { describe, expect, it } from "vitest";
import { hostRefusal, isAllowedHost, isLoopbackAddress, isLoopbackHost, parseAllowedHosts, type AllowedHost } from "./hosts";

/** BATON_ALLOWED_HOSTS: which Host a request may name (decision 030). */

function allowed(...entries: string[]): AllowedHost[] {
  const parsed = parseAllowedHosts(entries);
  if (!("hosts" in parsed)) throw new Error(parsed.problem);
  return parsed.hosts;
}

const request = (host: string | null, headers: Record<string, string> = {}) =>
  new Request("http://url-host.test/api/v1/board", { headers: { ...(host === null ? {} : { host }), ...headers } });

describe("parseAllowedHosts", () => {
  it("takes names with an optional port, lowercased, and refuses anything else naming the entry", () => {
    expect(allowed("Baton.Example.com", "baton.example.com:8443", "[::1]:3000", "10.0.0.5")).toEqual([
      { name: "baton.example.com", port: null },
      { name: "baton.example.com", port: "8443" },
      { name: "[::1]", port: "3000" },
      { name: "10.0.0.5", port: null },
    ]);
    for (const bad of ["https://baton.example.com", "baton.example.com/", "*.example.com", "baton.example.com:port", "a b"]) {
      const parsed = parseAllowedHosts([bad]);
      expect("problem" in parsed && parsed.problem, bad).toContain(`"${bad}"`);
    }
  });
});

describe("isAllowedHost", () => {
  const list = allowed("baton.example.com", "intranet.example.com:8443");
  it("allows a listed name on any port, a name listed with a port only on that port", () => {
    expect(isAllowedHost("baton.example.com", list)).toBe(true);
    expect(isAllowedHost("BATON.example.com:3000", list)).toBe(true);
    expect(isAllowedHost("intranet.example.com:8443", list)).toBe(true);
    expect(isAllowedHost("intranet.example.com:3000", list)).toBe(false);
    expect(isAllowedHost("intranet.example.com", list)).toBe(false);
  });
  it("refuses other names, look-alikes and garbage", () => {
    for (const host of ["evil.example", "baton.example.com.evil.example", "xbaton.example.com", "", "baton.example.com:1:2", "baton.example.com@evil"]) {
      expect(isAllowedHost(host, list), host).toBe(false);
    }
  });
  it("always allows loopback names", () => {
    for (const host of ["localhost", "localhost:3000", "127.0.0.1:3210", "127.1.2.3", "[::1]:3000", "app.localhost"]) {
      expect(isAllowedHost(host, list), host).toBe(true);
    }
  });
});

describe("isLoopbackHost and isLoopbackAddress", () => {
  it("tell this machine's names and addresses from others", () => {
    expect(["localhost", "127.0.0.1:3000", "[::1]"].every(isLoopbackHost)).toBe(true);
    expect(["localhost.evil.example", "128.0.0.1", "0.0.0.0", "[::2]", "10.0.0.1"].some(isLoopbackHost)).toBe(false);
    expect(["127.0.0.1", "::1", "::ffff:127.0.0.1", " 127.0.0.1"].every(isLoopbackAddress)).toBe(true);
    expect(["10.0.0.1", "::ffff:10.0.0.1", "fe80::1", ""].some(isLoopbackAddress)).toBe(false);
  });
});

describe("hostRefusal", () => {
  const list = allowed("baton.example.com");
  it("allows any host when no list is set", () => {
    expect(hostRefusal(request("evil.example"), [])).toBeNull();
  });
  it("refuses a Host not listed with 421 naming it", () => {
    const refusal = hostRefusal(request("evil.example:3000"), list);
    expect(refusal?.status).toBe(421);
    expect(refusal?.code).toBe("misdirected_request");
    expect(refusal?.message).toContain('"evil.example:3000"');
    expect(refusal?.message).toContain("BATON_ALLOWED_HOSTS");
  });
  it("checks X-Forwarded-Host too, every entry", () => {
    expect(hostRefusal(request("127.0.0.1:3000", { "x-forwarded-host": "baton.example.com" }), list)).toBeNull();
    expect(hostRefusal(request("127.0.0.1:3000", { "x-forwarded-host": "evil.example" }), list)?.status).toBe(421);
    expect(hostRefusal(request("baton.example.com", { "x-forwarded-host": "baton.example.com, evil.example" }), list)?.status).toBe(421);
  });
  it("uses the URL's host when there is no Host header", () => {
    expect(hostRefusal(request(null), list)?.message).toContain("url-host.test");
    expect(hostRefusal(request(null), allowed("url-host.test"))).toBeNull();
  });
});
