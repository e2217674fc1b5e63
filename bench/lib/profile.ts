import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Reads V8 .cpuprofile files (node --cpu-prof) and names where the CPU time went. */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  file: string;
  /** Sampled time, and the part that was not idle, in ms. */
  totalMs: number;
  busyMs: number;
  /** Self time by function, and by where the code lives (package, app code, GC, ...), busiest first. */
  functions: { name: string; ms: number }[];
  areas: { name: string; ms: number }[];
}

/** The .cpuprofile files in `dir` modified at or after `sinceMs`, oldest first. */
export function profilesIn(dir: string, sinceMs = 0): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).mtimeMs >= sinceMs)
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

function area(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "node_modules/".length).split("/");
    const name = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
    // Next's own server bundles hold the compiled app: name the chunk folder.
    return name === "next" ? `next/${parts.slice(1, 4).join("/")}` : name;
  }
  if (url.startsWith("node:")) return "node internals";
  const server = url.indexOf("/server/");
  if (url.includes(".next")) return `app bundle ${url.slice(server >= 0 ? server : 0).split("/").slice(0, 4).join("/")}`;
  return url.replace(/^file:\/\//, "");
}

export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas![index] ?? 0) / 1000));
  } else {
    const interval = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0));
    for (const node of profile.nodes) selfMs.set(node.id, (node.hitCount ?? 0) * interval);
  }
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  for (const [id, ms] of selfMs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    totalMs += ms;
    if (functionName === "(idle)") {
      idleMs += ms;
      continue;
    }
    const where = url ? `${url.replace(/^file:\/\//, "").split("/").slice(-3).join("/")}:${lineNumber + 1}` : "";
    const name = `${functionName || "(anonymous)"}${where ? ` ${where}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
    const place = area(url, functionName);
    areas.set(place, (areas.get(place) ?? 0) + ms);
  }
  const sorted = (map: Map<string, number>) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, ms]) => ({ name, ms }));
  return { file, totalMs, busyMs: totalMs - idleMs, functions: sorted(functions), areas: sorted(areas) };
}
