import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SetupForm } from "@/components/auth/setup-form";
import { PANEL_CLASS } from "@/components/ui/panel";
import { PASSWORD_MIN } from "@/lib/auth/passwords";
import { hasAnyUser } from "@/lib/auth/users";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: { absolute: "Set up Baton" } };

/** First run: a fresh install has no accounts; the first one is the admin. Once anyone exists, this page is sign-in. */
export default async function SetupPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // The one-time code Baton printed at start (needed from another machine); the form sends it on.
  const { code } = await searchParams;
  if (await hasAnyUser()) redirect("/sign-in");
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col items-center overflow-auto p-4">
      <div className={`mt-8 w-full max-w-sm ${PANEL_CLASS}`}>
        <h1 id="setup-heading" className="mb-1 text-lg font-semibold">
          Create the admin account
        </h1>
        <p className="mb-4 text-sm text-muted">
          Baton has no accounts yet. The first one is the admin: it adds people and manages API tokens.
        </p>
        <SetupForm minPasswordLength={PASSWORD_MIN} code={typeof code === "string" ? code : undefined} />
      </div>
    </main>
  );
}
