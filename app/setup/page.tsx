import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthPage } from "@/components/auth/auth-page";
import { SetupForm } from "@/components/auth/setup-form";
import type { SearchParams } from "@/components/shared/address-filters";
import { PASSWORD_MIN } from "@/lib/auth/passwords";
import { hasAnyUser } from "@/lib/auth/users";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: { absolute: "Set up Baton" } };

/** First run: a fresh install has no accounts; the first one is the admin. Once anyone exists, this page is sign-in. */
export default async function SetupPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  // The one-time code Baton printed at start (needed from another machine); the form sends it on.
  const { code } = await searchParams;
  if (await hasAnyUser()) redirect("/sign-in");
  return (
    <AuthPage headingId="setup-heading" title="Create the admin account" intro="Baton has no accounts yet. The first one is the admin: it adds people and manages API tokens.">
      <SetupForm minPasswordLength={PASSWORD_MIN} code={typeof code === "string" ? code : undefined} />
    </AuthPage>
  );
}
