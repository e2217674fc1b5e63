import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CLIENT_ADDRESS_HEADER, clientAddressOf, installClientAddressHeader, normaliseAddress } from "./client-address";

const requestWith = (headers: Record<string, string>) => new Request("http://baton.test/api/v1/session", { headers });

describe("the client address", () => {
  it("is the server's stamp of the socket address; X-Forwarded-For is ignored without a trusted proxy", () => {
    expect(clientAddressOf(requestWith({ [CLIENT_ADDRESS_HEADER]: "192.0.2.1", "x-forwarded-for": "203.0.113.5" }), 0)).toBe("192.0.2.1");
  });

  it("behind N trusted proxies is the N-th X-Forwarded-For entry from the right; a shorter header means the socket", () => {
    const headers = { [CLIENT_ADDRESS_HEADER]: "10.0.0.2", "x-forwarded-for": "6.6.6.6, 192.0.2.1, 10.0.0.1" };
    expect(clientAddressOf(requestWith(headers), 1)).toBe("10.0.0.1");
    expect(clientAddressOf(requestWith(headers), 2)).toBe("192.0.2.1");
    expect(clientAddressOf(requestWith(headers), 4)).toBe("10.0.0.2");
  });

  it("counts IPv6 by its /64 and IPv4-mapped addresses as IPv4", () => {
    expect(normaliseAddress("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(normaliseAddress("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
    expect(normaliseAddress("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(normaliseAddress("[2001:db8::1]:443")).toBe("2001:db8:0:0::/64");
    expect(normaliseAddress("192.0.2.7:5000")).toBe("192.0.2.7");
  });

  it("is stamped on every request by the server hook, over whatever the client sent under that name", async () => {
    await installClientAddressHeader();
    await installClientAddressHeader();
    const seen: (string | string[] | undefined)[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers[CLIENT_ADDRESS_HEADER]);
      response.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        const sent = httpRequest({ host: "127.0.0.1", port, path: "/", headers: { [CLIENT_ADDRESS_HEADER]: "203.0.113.66" } }, (response) => {
          response.resume();
          response.on("end", resolve);
        });
        sent.on("error", reject);
        sent.end();
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(seen).toEqual(["127.0.0.1"]);
  });
});
