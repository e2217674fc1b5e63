import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Separate build folders let a benchmark and the test suite build side by side.
  distDir: process.env.BATON_DIST_DIR ?? ".next",
  // Native and file-reading packages stay as Node modules rather than being bundled.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3", "chokidar"],
};

export default nextConfig;
