import { describe, expect, it } from "vitest";
import { NextRequest } from "next/server";

/** proxy.ts refuses pages for a Host not in BATON_ALLOWED_HOSTS (decision 030). */

describe("proxy.ts and BATON_ALLOWED_HOSTS", () => {
  it("answers 421 for a page requested by another name, and renders it for a listed or loopback one", async () => {
    const saved = process.env.BATON_ALLOWED_HOSTS;
    process.env.BATON_ALLOWED_HOSTS = "baton.example.com";
    try {
      const { proxy } = await import("@/proxy");
      const page = (host: string) => proxy(new NextRequest(`http://${host}/sign-in`, { headers: { host } }));
      const refused = page("evil.example:3000");
      expect(refused.status).toBe(421);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("misdirected_request");
      for (const host of ["baton.example.com", "127.0.0.1:3210"]) {
        const response = page(host);
        expect(response.status, host).toBe(200);
        expect(response.headers.get("x-middleware-next"), host).toBe("1");
      }
    } finally {
      if (saved === undefined) delete process.env.BATON_ALLOWED_HOSTS;
      else process.env.BATON_ALLOWED_HOSTS = saved;
    }
  });
});
