import { describe, expect, it } from "vitest";
import { WriterTurns } from "./writer-turns";

/** The in-process queue of ledger writers (decision 091); the database side is in sql-transaction.test.ts. */

describe("WriterTurns", () => {
  it("gives the turn to one writer at a time, in the order they asked", async () => {
    const turns = new WriterTurns();
    const order: number[] = [];
    const writers = Array.from({ length: 5 }, (_, index) =>
      turns.take(5_000).then(async (end) => {
        order.push(index);
        await Promise.resolve();
        expect(turns.queued).toBe(4 - index);
        end();
      }),
    );
    await Promise.all(writers);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(turns.queued).toBe(0);
  });

  it("a wait past its limit fails as a transaction that could not start, and leaves the queue", async () => {
    const turns = new WriterTurns();
    const endFirst = await turns.take(5_000);
    const late = turns.take(20).then(() => null, (error: unknown) => error);
    const next = turns.take(5_000);
    expect(String(await late)).toMatch(/Unable to start a transaction within 20 ms/);
    expect(turns.queued).toBe(1);
    endFirst();
    // The turn goes to the writer behind the one that gave up, which then frees it.
    (await next)();
    expect(turns.queued).toBe(0);
    (await turns.take(5_000))();
  });

  it("with a capacity of two, two writers hold a turn at once and the third waits for either", async () => {
    const turns = new WriterTurns(2);
    const endFirst = await turns.take(5_000);
    const endSecond = await turns.take(5_000);
    let third = false;
    const thirdTurn = turns.take(5_000).then((end) => {
      third = true;
      return end;
    });
    await Promise.resolve();
    expect({ third, queued: turns.queued }).toEqual({ third: false, queued: 1 });
    endSecond();
    (await thirdTurn)();
    endFirst();
    expect(turns.queued).toBe(0);
    // Both turns free again: two at once without waiting.
    const [a, b] = await Promise.all([turns.take(20), turns.take(20)]);
    a();
    b();
  });

  it("ending a turn twice hands it on once", async () => {
    const turns = new WriterTurns();
    const end = await turns.take(5_000);
    let second = false;
    const secondTurn = turns.take(5_000).then((endSecond) => {
      second = true;
      return endSecond;
    });
    const third = turns.take(50).then(() => "granted", () => "timed out");
    end();
    end();
    const endSecond = await secondTurn;
    expect(second).toBe(true);
    expect(await third).toBe("timed out");
    endSecond();
  });
});
