/** Space kept between a tooltip and the viewport's edges (px). */
const EDGE = 8;
/** Between a tooltip and what it describes (px). */
const GAP = 6;

interface Box {
  top: number;
  bottom: number;
  left: number;
  width: number;
}

/**
 * Where a fixed tooltip of `size` goes for an element at `anchor` (its bounding rectangle):
 * centred above it; below it when there is no room above; moved sideways to stay inside the
 * viewport (a timeline marker at "now" sits at the right edge), and never above its top.
 */
export function tooltipPlace(anchor: Box, size: { width: number; height: number }, viewport: { width: number; height: number }): { left: number; top: number } {
  const roomAbove = anchor.top - GAP - size.height >= EDGE;
  const roomBelow = anchor.bottom + GAP + size.height <= viewport.height - EDGE;
  const top = roomAbove || !roomBelow ? anchor.top - GAP - size.height : anchor.bottom + GAP;
  const centred = anchor.left + anchor.width / 2 - size.width / 2;
  const left = Math.max(EDGE, Math.min(centred, viewport.width - EDGE - size.width));
  return { left, top: Math.max(EDGE, top) };
}
