import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { PANEL_CLASS } from "@/components/ui/panel";
import { SignInForm } from "@/components/auth/sign-in-form";
import { currentPagePerson, safeNextPath } from "@/lib/auth/page-person";
import { hasAnyUser } from "@/lib/auth/users";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** Where to go after signing in: a path of this site, never back to sign-in or first-run (a redirect loop). */
function nextPath(next: unknown): string {
  const path = safeNextPath(next);
  const pathname = path.split(/[?#]/)[0]?.replace(/\/+$/, "") ?? "";
  return pathname === "/sign-in" || pathname === "/setup" ? "/" : path;
}

export default async function SignInPage({ searchParams }: { searchParams: SearchParams }) {
  const next = nextPath((await searchParams).next);
  if (!(await hasAnyUser())) redirect("/setup");
  if (await currentPagePerson()) redirect(next);
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col items-center overflow-auto p-4">
      <div className={`mt-8 w-full max-w-sm ${PANEL_CLASS}`}>
        <h1 id="sign-in-heading" className="mb-4 text-lg font-semibold">
          Sign in to Baton
        </h1>
        <SignInForm next={next} />
      </div>
    </main>
  );
}
