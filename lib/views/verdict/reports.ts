import { z } from "zod";
import type { VerdictPointerKind } from "../../contract/canonical";
import { REVIEW_PASS_TOTAL } from "../../contract/lint";
import { normaliseSeverity, SEVERITIES } from "../../contract/severity";
import {
  REVIEW_DIMENSIONS,
  REVIEW_VERDICTS,
  type ReviewReportDto,
  type VerdictFindingDto,
  type VerdictReportDto,
  type VerificationReportDto,
} from "./dto";

/** The report files' shapes as agents write them (docs/contract.md#report-files). */

const taskId = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((value) => (value === null || value === undefined ? null : String(value)));

const findingInput = z.union([
  z.string().transform((detail) => ({ detail })),
  z.looseObject({
    code: z.union([z.string(), z.number()]).nullish(),
    severity: z.union([z.string(), z.number()]).nullish(),
    detail: z.string().nullish(),
    message: z.string().nullish(),
  }),
]);

const verificationInput = z.looseObject({
  task_id: taskId,
  passed: z.boolean({ error: "passed must be true or false" }),
  findings: z.array(findingInput).nullish(),
  head_commit: z.string().nullish(),
  coverage: z.unknown().optional(),
});

const reviewInput = z.looseObject({
  task_id: taskId,
  total: z.number().min(0).max(10),
  verdict: z
    .string()
    .transform((value) => value.trim().toLowerCase())
    .pipe(z.enum(REVIEW_VERDICTS)),
  dimensions: z
    .array(z.looseObject({ name: z.string(), score: z.number().min(0).max(2), note: z.string().nullish() }))
    .nullish(),
});

const coverageInput = z.union([
  z.number(),
  z.looseObject({ current: z.number(), previous: z.number().nullish() }),
]);

export type ReportParse = { ok: true; report: VerdictReportDto } | { ok: false; reason: string };

/**
 * A report from parsed JSON. A pointer of kind "other" is classified by its content:
 * `passed` makes it a verification, `total` with `verdict` a review.
 */
export function parseReport(kind: VerdictPointerKind, json: unknown): ReportParse {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { ok: false, reason: "not a JSON object" };
  }
  const type = kind === "other" ? classify(json) : kind;
  if (type === null) {
    return { ok: false, reason: "neither a verification report (no passed) nor a review (no total with verdict)" };
  }
  if (type === "verification") {
    const parsed = verificationInput.safeParse(json);
    return parsed.success ? { ok: true, report: toVerification(parsed.data) } : notA("verification report", parsed.error);
  }
  const parsed = reviewInput.safeParse(json);
  return parsed.success ? { ok: true, report: toReview(parsed.data) } : notA("review report", parsed.error);
}

function classify(json: object): "verification" | "review" | null {
  if ("passed" in json) return "verification";
  if ("total" in json && "verdict" in json) return "review";
  return null;
}

function toVerification(input: z.infer<typeof verificationInput>): VerificationReportDto {
  const findings = (input.findings ?? []).map(toFinding);
  const coverage = coverageInput.safeParse(input.coverage);
  return {
    type: "verification",
    task_id: input.task_id,
    passed: input.passed,
    findings: SEVERITIES.map((severity) => {
      const items = findings.filter((finding) => finding.severity === severity);
      return { severity, count: items.length, items };
    }),
    finding_count: findings.length,
    coverage: !coverage.success
      ? null
      : typeof coverage.data === "number"
        ? coverage.data
        : { current: coverage.data.current, previous: coverage.data.previous ?? null },
    ...(input.head_commit ? { head_commit: input.head_commit } : {}),
  };
}

function toFinding(input: z.infer<typeof findingInput>): VerdictFindingDto {
  const raw = "severity" in input && input.severity !== null && input.severity !== undefined ? String(input.severity) : null;
  const { severity, known } = normaliseSeverity(raw);
  const code = "code" in input && input.code !== null && input.code !== undefined ? String(input.code) : null;
  const detail = input.detail ?? ("message" in input ? input.message : undefined) ?? "";
  return { code, detail, severity, severity_raw: raw, severity_known: known };
}

function toReview(input: z.infer<typeof reviewInput>): ReviewReportDto {
  const dimensions = (input.dimensions ?? []).map((dimension) => ({
    name: dimension.name,
    score: dimension.score,
    note: dimension.note ?? "",
  }));
  const named = new Set(dimensions.map((dimension) => dimension.name));
  return {
    type: "review",
    task_id: input.task_id,
    total: input.total,
    verdict: input.verdict,
    passed: input.verdict === "pass" && input.total >= REVIEW_PASS_TOTAL,
    dimensions,
    missing_dimensions: REVIEW_DIMENSIONS.filter((name) => !named.has(name)),
  };
}

function notA(what: string, error: z.ZodError): ReportParse {
  const problems = error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message));
  return { ok: false, reason: `not a valid ${what}: ${problems.join("; ")}` };
}
