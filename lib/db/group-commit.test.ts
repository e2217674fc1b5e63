import { describe, expect, it } from "vitest";
import { groupCommitQueue, type Waiting } from "./group-commit";

/** A writer whose groups are recorded; each item's result is itself doubled, or its write throws. */
function recordingQueue(name: string, options: { maxGroup: number; failWhen?: (items: number[]) => boolean; failedThrows?: boolean }) {
  const groups: number[][] = [];
  let release: () => void = () => {};
  let hold = Promise.resolve();
  const queue = groupCommitQueue<number, number>(name, {
    maxGroup: options.maxGroup,
    write: async (group: Waiting<number, number>[]) => {
      const items = group.map((waiting) => waiting.item);
      groups.push(items);
      await hold;
      if (options.failWhen?.(items)) throw new Error(`group ${items.join(",")} failed`);
      for (const waiting of group) waiting.resolve(waiting.item * 2);
    },
    failed: async (group, error) => {
      if (options.failedThrows) throw new Error("the failure handler failed too");
      for (const waiting of group) waiting.reject(error);
    },
  });
  return {
    queue,
    groups,
    holdNext: () => {
      hold = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

describe("group commit (lib/db/group-commit.ts)", () => {
  it("writes a lone item at once and the items that arrive meanwhile together, at most maxGroup at a time, in order", async () => {
    const writer = recordingQueue("TestGroupCommitOrder", { maxGroup: 3 });
    writer.holdNext();
    const answers = [1, 2, 3, 4, 5, 6].map((item) => writer.queue.submit(item));
    expect(writer.queue.waiting()).toBe(5);
    writer.release();
    expect(await Promise.all(answers)).toEqual([2, 4, 6, 8, 10, 12]);
    expect(writer.groups).toEqual([[1], [2, 3, 4], [5, 6]]);
    expect(writer.queue.waiting()).toBe(0);
  });

  it("answers a failed group through its failure handler, even one that throws, and goes on with the next", async () => {
    const writer = recordingQueue("TestGroupCommitFailure", { maxGroup: 8, failWhen: (items) => items.includes(2), failedThrows: true });
    writer.holdNext();
    const answers = [1, 2, 3, 4].map((item) => writer.queue.submit(item));
    writer.release();
    const settled = await Promise.allSettled(answers);
    expect(settled[0]).toEqual({ status: "fulfilled", value: 2 });
    for (const answer of settled.slice(1)) expect(answer).toMatchObject({ status: "rejected", reason: { message: "the failure handler failed too" } });
    expect(await writer.queue.submit(5)).toBe(10);
    expect(writer.groups).toEqual([[1], [2, 3, 4], [5]]);
  });
});
