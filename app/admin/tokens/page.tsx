import type { Metadata } from "next";
import { TokensAdmin } from "@/components/admin/tokens-admin";
import { requirePagePerson } from "@/lib/auth/page-person";
import { listApiTokens } from "@/lib/auth/tokens";

/** When the list was read (ms): ages on the page are measured from it. */
const readAt = () => Date.now();

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Tokens" };

/** Admin: API tokens for agents and scripts; create (the secret is shown once) and revoke. */
export default async function TokensPage() {
  await requirePagePerson("/admin/tokens", "admin");
  const tokens = await listApiTokens();
  return (
    <>
      <h1 className="text-lg font-semibold">Tokens</h1>
      <TokensAdmin initialTokens={tokens} loadedAt={readAt()} />
    </>
  );
}
