import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import path from "node:path";

/**
 * The CPU a step's processes used, its servers and browsers included: each step runs in a
 * cpuacct control group of its own (cgroup v1, as on this project's CI machines), which every
 * process it starts stays in, even one whose parent is gone (a shell's `times` missed the
 * servers and browsers that Playwright kills: under half of a browser step's CPU).
 * Where no group can be made (no root, another cgroup layout) the step runs as it is and has no figure.
 */
const CPUACCT = "/sys/fs/cgroup/cpuacct";

export interface StepCpu {
  /** The command, started inside the group. */
  command: string[];
  /** CPU-seconds used so far, or null without a group. */
  seconds(): number | null;
  /** Removes the group (a process still alive in it keeps it: left for the machine's next start). */
  remove(): void;
}

export function stepCpu(name: string, command: string[]): StepCpu {
  const group = path.join(CPUACCT, `baton-${process.pid}-${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`);
  try {
    mkdirSync(group);
  } catch {
    return { command, seconds: () => null, remove: () => undefined };
  }
  return {
    // The shell joins the group, then becomes the command: nothing it starts runs outside.
    command: ["bash", "-c", 'echo $$ 2>/dev/null > "$0/cgroup.procs"; exec "$@"', group, ...command],
    seconds() {
      try {
        // Nothing counted: the shell could not join the group.
        const used = Number(readFileSync(path.join(group, "cpuacct.usage"), "utf8")) / 1e9;
        return used > 0 ? used : null;
      } catch {
        return null;
      }
    },
    remove() {
      try {
        rmdirSync(group);
      } catch {
        // Still in use or already gone.
      }
    },
  };
}
