import type { CanonicalPacket } from "../../contract/canonical";
import { versionDiffDto, type VersionDiffDto } from "./dto";


/** Risks are matched by fingerprint, the contract's identity of "the same risk". */
export function diffVersions(before: CanonicalPacket, after: CanonicalPacket): VersionDiffDto {
  const risksBefore = new Map((before.open_risks ?? []).map((risk) => [risk.fingerprint, risk]));
  const risksAfter = new Map((after.open_risks ?? []).map((risk) => [risk.fingerprint, risk]));
  const filesBefore = new Set((before.changed_files ?? []).map((file) => file.path));
  const filesAfter = new Set((after.changed_files ?? []).map((file) => file.path));
  const nextBefore = before.next_action?.text ?? null;
  const nextAfter = after.next_action?.text ?? null;
  return versionDiffDto.parse({
    risks_added: [...risksAfter].filter(([fp]) => !risksBefore.has(fp)).map(([, r]) => ({ severity: r.severity, detail: r.detail })),
    risks_removed: [...risksBefore].filter(([fp]) => !risksAfter.has(fp)).map(([, r]) => ({ severity: r.severity, detail: r.detail })),
    risks_severity_changed: [...risksAfter].flatMap(([fp, risk]) => {
      const old = risksBefore.get(fp);
      return old && old.severity !== risk.severity ? [{ detail: risk.detail, before: old.severity, after: risk.severity }] : [];
    }),
    next_action: { before: nextBefore, after: nextAfter, changed: nextBefore !== nextAfter },
    files_added: [...filesAfter].filter((file) => !filesBefore.has(file)),
    files_removed: [...filesBefore].filter((file) => !filesAfter.has(file)),
    files_kept: [...filesAfter].filter((file) => filesBefore.has(file)),
  });
}
