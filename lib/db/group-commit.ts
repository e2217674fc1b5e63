import "server-only";
import { singleton } from "../core/singleton";

/**
 * Group commit, shared by the packet batch writer (docs/decisions/008-group-commit.md) and the
 * session reports' writer (docs/decisions/098-session-reports-commit-together.md): items that
 * arrive while a group's transaction runs wait, holding no connection, and the next transaction
 * takes up to `maxGroup` of them; a lone item is written at once. What a group's transaction
 * does, and what its failure answers, is each writer's own.
 */

export interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitWriter<Item, Result> {
  /** Max items per transaction. */
  maxGroup: number;
  /** Before each group is taken: may wait a moment for company. */
  gather?: () => Promise<void>;
  /** Writes the group in one transaction and settles each of its items; throws when the transaction failed. */
  write: (group: Waiting<Item, Result>[]) => Promise<void>;
  /** Settles a group whose transaction failed; `takeWaiting` empties the queue behind it. */
  failed: (group: Waiting<Item, Result>[], error: unknown, takeWaiting: () => Waiting<Item, Result>[]) => Promise<void>;
}

export interface GroupCommitQueue<Item, Result> {
  /** Queues the item; resolves or rejects once its group is settled. */
  submit(item: Item): Promise<Result>;
  /** Items waiting for the next group. */
  waiting(): number;
}

/** The process's one queue named `name` (one per process whatever the bundles; see singleton). */
export function groupCommitQueue<Item, Result>(name: string, writer: GroupCommitWriter<Item, Result>): GroupCommitQueue<Item, Result> {
  const queue = singleton(name, () => ({ waiting: [] as Waiting<Item, Result>[], writing: false }));
  const takeWaiting = () => queue.waiting.splice(0);

  async function drain(): Promise<void> {
    queue.writing = true;
    try {
      while (queue.waiting.length) {
        if (writer.gather) await writer.gather();
        const group = queue.waiting.splice(0, writer.maxGroup);
        try {
          await writer.write(group);
        } catch (error) {
          // A failure handler that throws still answers its group (a promise settles once).
          await writer.failed(group, error, takeWaiting).catch((failure: unknown) => group.forEach((waiting) => waiting.reject(failure)));
        }
      }
    } finally {
      queue.writing = false;
    }
  }

  return {
    submit(item) {
      return new Promise<Result>((resolve, reject) => {
        queue.waiting.push({ item, resolve, reject });
        if (!queue.writing) void drain();
      });
    },
    waiting: () => queue.waiting.length,
  };
}
