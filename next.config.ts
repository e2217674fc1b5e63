import type { NextConfig } from "next";
import { NON_PAGE_CONTENT_SECURITY_POLICY, STATIC_SECURITY_HEADERS } from "./lib/http/security-headers";

const nonPagePolicy = [{ key: "Content-Security-Policy", value: NON_PAGE_CONTENT_SECURITY_POLICY }];

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Separate build folders let a benchmark and the test suite build side by side.
  distDir: process.env.BATON_DIST_DIR ?? ".next",
  // CI's test build only (scripts/build-if-stale.ts, BATON_BUILD_SKIP_TYPECHECK=1): .ci/run
  // runs `tsc` over the same project beside it, so the build need not do it twice. Every
  // other build, `npm start`'s included, type-checks.
  typescript: { ignoreBuildErrors: process.env.BATON_BUILD_SKIP_TYPECHECK === "1" },
  // Turbopack's build cache (.next/cache) makes this checkout's next build cheaper, but writing it
  // cost a cold build about a third more CPU here. CI (CI set, as .ci/run does) builds once on a
  // fresh machine and never reads it: no cache there; the output is the same (decision 081).
  experimental: { turbopackFileSystemCacheForBuild: !process.env.CI },
  // Native and file-reading packages stay as Node modules rather than being bundled.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3", "chokidar"],
  // Headers that do not change per request (decision 022); pages get their nonce policy in proxy.ts.
  async headers() {
    return [
      { source: "/:path*", headers: [...STATIC_SECURITY_HEADERS] },
      { source: "/api/:path*", headers: nonPagePolicy },
      { source: "/threads/:key/handoff.json", headers: nonPagePolicy },
      { source: "/threads/:key/handoff.md", headers: nonPagePolicy },
      // Static files and their 404s are never pages: the strict policy (no inline anything).
      { source: "/_next/static/:path*", headers: nonPagePolicy },
      { source: "/favicon.ico", headers: nonPagePolicy },
      { source: "/icon.svg", headers: nonPagePolicy },
    ];
  },
};

export default nextConfig;
