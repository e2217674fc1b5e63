import { describe, expect, it } from "vitest";
import { tooltipPlace } from "./tooltip-place";

const viewport = { width: 390, height: 844 };
const size = { width: 300, height: 80 };
const marker = (left: number, top: number) => ({ left, top, bottom: top + 12, width: 12 });

describe("tooltipPlace", () => {
  it("centres a tooltip above its marker when there is room", () => {
    expect(tooltipPlace(marker(189, 400), size, viewport)).toEqual({ left: 45, top: 314 });
  });

  it("keeps it inside the right and left edges", () => {
    // A marker at "now", the right edge of the lanes.
    const right = tooltipPlace(marker(370, 400), size, viewport);
    expect(right.left + size.width).toBe(viewport.width - 8);
    expect(tooltipPlace(marker(2, 400), size, viewport).left).toBe(8);
  });

  it("goes below a marker near the top, above one near the bottom, and never past the top", () => {
    expect(tooltipPlace(marker(189, 40), size, viewport).top).toBe(58);
    const bottom = tooltipPlace(marker(189, 830), size, viewport);
    expect(bottom.top + size.height).toBeLessThanOrEqual(830);
    // No room either way (a tooltip taller than the screen): held at the top.
    expect(tooltipPlace(marker(189, 40), { width: 300, height: 900 }, viewport).top).toBe(8);
  });
});
