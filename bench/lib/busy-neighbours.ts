import { spawn, type ChildProcess } from "node:child_process";

/**
 * Processes that each keep one core busy beside the servers under test (BENCH_BUSY_CORES), as
 * other work on a shared machine does: what a target needs of the machine shows when the
 * machine is not the server's alone. Their CPU is counted with the other processes'.
 */
export function busyNeighbours(count: number): { stop: () => void } {
  // Each spinner also ends when the bench is gone (killed before its `finally` ran): it looks
  // every few million turns whether its parent is still the bench.
  const spin = `const bench = ${process.pid}; for (let turn = 1; ; turn++) if (turn % 4e6 === 0 && process.ppid !== bench) process.exit(0);`;
  const spinners: ChildProcess[] = Array.from({ length: count }, () => spawn(process.execPath, ["-e", spin], { stdio: "ignore" }));
  return {
    stop() {
      for (const spinner of spinners) spinner.kill("SIGKILL");
    },
  };
}
