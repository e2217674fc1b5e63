import { describe, expect, it } from "vitest";
import { webhookUrlProblem } from "./dto";

describe("webhookUrlProblem", () => {
  it("accepts http and https addresses", () => {
    expect(webhookUrlProblem("https://hooks.example.com/baton")).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:9000/x")).toBeNull();
  });

  it("refuses other schemes, non-URLs and addresses carrying credentials", () => {
    expect(webhookUrlProblem("ftp://example.com/")).toMatch(/http/);
    expect(webhookUrlProblem("not a url")).toMatch(/full http/);
    expect(webhookUrlProblem("https://user:pass@hooks.example.com/x")).toMatch(/user name or password/);
    expect(webhookUrlProblem("https://token@hooks.example.com/x")).toMatch(/user name or password/);
  });
});
