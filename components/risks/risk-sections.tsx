"use client";

import type { Severity } from "@/lib/contract/severity";
import type { RiskGroupDto } from "@/lib/views/risks/dto";

interface Section {
  id: "regressed" | Severity;
  title: string;
  /** The list's accessible name. */
  label: string;
  groups: RiskGroupDto[];
}

const SEVERITY_TITLES: Record<Severity, string> = { critical: "Critical", high: "High", medium: "Medium", low: "Low", info: "Info" };

/** The list's order is the server's (regressed first, then by severity): cut into sections where the heading changes. */
export function sectionsOf(groups: RiskGroupDto[]): Section[] {
  const sections: Section[] = [];
  for (const group of groups) {
    const id = group.regressed ? "regressed" : group.severity;
    let section = sections.at(-1);
    if (section?.id !== id) {
      section =
        id === "regressed"
          ? { id, title: "Regressed: back on top", label: "Regressed risks", groups: [] }
          : { id, title: SEVERITY_TITLES[id], label: `${SEVERITY_TITLES[id]} risks`, groups: [] };
      sections.push(section);
    }
    section.groups.push(group);
  }
  return sections;
}

/** The sections with their headings; `row` renders each risk. */
export function RiskSections({ sections, row }: { sections: Section[]; row: (group: RiskGroupDto) => React.ReactNode }) {
  return sections.map((section) => (
    <section key={section.id} aria-labelledby={`risks-${section.id}`} className="space-y-1">
      <h2 id={`risks-${section.id}`} className={`text-base font-semibold ${section.id === "regressed" ? "text-danger" : ""}`}>
        {section.title} <span className="text-sm font-normal text-muted">({section.groups.length})</span>
      </h2>
      <div role="list" aria-label={section.label} className="overflow-hidden rounded-lg ring-1 ring-line">
        {section.groups.map(row)}
      </div>
    </section>
  ));
}
