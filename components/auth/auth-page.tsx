import type { ReactNode } from "react";
import { PANEL_CLASS } from "@/components/ui/panel";

/** A page for someone not signed in (first run, sign-in): one narrow card, its heading (`headingId` names the form) and an optional line under it. */
export function AuthPage({ headingId, title, intro, children }: { headingId: string; title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col items-center overflow-auto p-4">
      <div className={`mt-8 w-full max-w-sm ${PANEL_CLASS}`}>
        <h1 id={headingId} className={`${intro ? "mb-1" : "mb-4"} text-lg font-semibold`}>
          {title}
        </h1>
        {intro ? <p className="mb-4 text-sm text-muted">{intro}</p> : null}
        {children}
      </div>
    </main>
  );
}
