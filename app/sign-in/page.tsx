import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthPage } from "@/components/auth/auth-page";
import { SignInForm } from "@/components/auth/sign-in-form";
import type { SearchParams } from "@/components/shared/address-filters";
import { currentPagePerson, safeNextPath } from "@/lib/auth/page-person";
import { hasAnyUser } from "@/lib/auth/users";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

/** Where to go after signing in: a path of this site, never back to sign-in or first-run (a redirect loop). */
function nextPath(next: unknown): string {
  const path = safeNextPath(next);
  const pathname = path.split(/[?#]/)[0]?.replace(/\/+$/, "") ?? "";
  return pathname === "/sign-in" || pathname === "/setup" ? "/" : path;
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const next = nextPath((await searchParams).next);
  if (!(await hasAnyUser())) redirect("/setup");
  if (await currentPagePerson()) redirect(next);
  return (
    <AuthPage headingId="sign-in-heading" title="Sign in to Baton">
      <SignInForm next={next} />
    </AuthPage>
  );
}
