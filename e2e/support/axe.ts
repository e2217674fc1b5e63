import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

/**
 * axe for a page of ours. The pages have no frames, so axe runs in the page itself (legacy
 * mode): the same rules and findings as the frame-by-frame run, without the extra page and
 * the second copy of axe that run opens each time. Every rule still runs; only violations
 * come back with all their elements (docs/decisions/081-browser-phase-cpu.md).
 */
export function axeOn(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode().options({ resultTypes: ["violations"] });
}
