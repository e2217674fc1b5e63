import { describe, expect, it } from "vitest";
import { BatonError } from "../core/errors";
import { preparePacket } from "./prepare";

const AT = Date.UTC(2026, 11, 1, 12, 0, 0);
const canonical = (extra: Record<string, unknown>) => preparePacket({ summary: "s", ...extra }, AT).canonical;

function refusal(extra: Record<string, unknown>): string {
  try {
    preparePacket({ summary: "s", ...extra }, AT);
  } catch (error) {
    if (error instanceof BatonError) return JSON.stringify(error.details);
    throw error;
  }
  throw new Error("accepted");
}

describe("pull_request", () => {
  it("takes a URL, a number or an object, in one canonical shape", () => {
    expect(canonical({ pull_request: "https://github.com/acme/app/pull/12" }).pull_request).toEqual({ url: "https://github.com/acme/app/pull/12", number: 12 });
    expect(canonical({ pull_request: 7 }).pull_request).toEqual({ number: 7 });
    expect(
      canonical({ pull_request: { web_url: "https://gitlab.example/acme/app/-/merge_requests/3", state: "opened", source_branch: " feat/x " } }).pull_request,
    ).toEqual({ url: "https://gitlab.example/acme/app/-/merge_requests/3", number: 3, state: "open", head_branch: "feat/x" });
    expect(canonical({ pull_request: { number: "9", state: "Open", draft: true, head: "feat/y" } }).pull_request).toEqual({ number: 9, state: "draft", head_branch: "feat/y" });
    expect(canonical({ pull_request: { html_url: "https://github.com/a/b/pull/4", state: "closed", merged: true } }).pull_request?.state).toBe("merged");
  });

  it("refuses an unknown state or an object naming no pull request, saying what it accepts", () => {
    expect(refusal({ pull_request: { number: 1, state: "pending" } })).toContain("open|opened|draft|merged|closed");
    expect(refusal({ pull_request: { state: "open" } })).toContain("pull_request");
  });
});

describe("usage", () => {
  it("maps the producers' spellings to tokens, a cost with its currency, model and duration", () => {
    expect(canonical({ usage: { input_tokens: 1200, output_tokens: 300, cost: 0.42, model: "m-1", duration_ms: 65_000 } }).usage).toEqual({
      input_tokens: 1200,
      output_tokens: 300,
      cost: { amount: 0.42, currency: "USD" },
      model: "m-1",
      duration_ms: 65_000,
    });
    expect(canonical({ usage: { prompt_tokens: 5, completion_tokens: 6, cost: { amount: 1.5, currency: "eur" }, duration_seconds: 2 } }).usage).toEqual({
      input_tokens: 5,
      output_tokens: 6,
      cost: { amount: 1.5, currency: "EUR" },
      duration_ms: 2000,
    });
    expect(canonical({ usage: { total_cost_usd: 0.1 } }).usage).toEqual({ cost: { amount: 0.1, currency: "USD" } });
    expect(canonical({ usage: { model: null } }).usage).toBeUndefined();
  });

  it("refuses negative counts and a currency that is not three letters", () => {
    expect(refusal({ usage: { input_tokens: -1 } })).toContain("usage");
    expect(refusal({ usage: { cost: 1, currency: "dollars" } })).toContain("usage");
  });
});
