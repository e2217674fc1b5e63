import "server-only";
import path from "node:path";

/** Whether `child` is `parent` or lies below it (both absolute, symlinks already resolved). */
export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
