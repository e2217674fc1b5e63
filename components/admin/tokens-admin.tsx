"use client";

import { useState } from "react";
import { tokenSummarySchema, type TokenSummary } from "@/lib/auth/dto";
import type { Problem } from "@/lib/browser/problem";
import { replaceRow } from "@/lib/browser/rows";
import { sendJson } from "@/lib/browser/send-json";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";
import { TOKENS, useAdminList, useRowAction } from "./admin-list";
import { AdminTable, CELL, ListNotices } from "./admin-table";
import { CreateTokenForm } from "./create-token-form";

/** The token admin: the list (never a secret) with revoke, and a form that creates a token and shows it once. */
export function TokensAdmin({ initialTokens, loadedAt }: { initialTokens: TokenSummary[]; loadedAt: number }) {
  const tokens = useAdminList(TOKENS, initialTokens, loadedAt);
  const now = tokens.dataUpdatedAt;
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);

  const revoke = useRowAction({
    resource: TOKENS,
    send: (token: TokenSummary) => sendJson("DELETE", `${TOKENS.url}/${encodeURIComponent(token.id)}`, undefined, tokenSummarySchema),
    failed: (token) => `Could not revoke ${token.name}`,
    onProblem: setRowProblem,
    update: (token) => replaceRow(token),
    onDone: (token) => setRevoked(`Revoked ${token.name}: requests with it are refused from now on.`),
  });

  return (
    <>
      <CreateTokenForm />
      <Panel headingId="tokens-heading" title="API tokens">
        <ListNotices problem={rowProblem} done={revoked} refreshError={tokens.error} />
        {tokens.data.length === 0 ? (
          <p className="text-sm text-muted">No tokens yet. Agents and scripts need one to send packets.</p>
        ) : (
          <AdminTable caption="API tokens" headings={["Name", "Token", "Scopes", "Project", "Created", "Last used", "Revoked"]}>
            {tokens.data.map((token) => (
              <tr key={token.id} className="border-t border-line">
                <th scope="row" className={`${CELL} font-medium`}>
                  {token.name}
                </th>
                <td className={`${CELL} font-mono text-xs`}>{token.display}</td>
                <td className={CELL}>{token.scopes.join(", ")}</td>
                <td className={CELL}>{token.project ?? <span className="text-muted">any</span>}</td>
                <td className={CELL}>
                  <When iso={token.created_at} now={now} />
                </td>
                <td className={CELL}>{token.last_used_at ? <When iso={token.last_used_at} now={now} /> : "never"}</td>
                <td className={CELL}>{token.revoked_at ? <When iso={token.revoked_at} now={now} /> : "no"}</td>
                <td className="py-1.5">
                  {token.revoked_at ? null : (
                    <ConfirmButton
                      label="Revoke"
                      name={`Revoke ${token.name}`}
                      confirmLabel="Confirm revoke"
                      confirmName={`Confirm revoke ${token.name}`}
                      cancelLabel="Cancel"
                      cancelName={`Cancel revoking ${token.name}`}
                      pending={revoke.isPending && revoke.variables?.id === token.id}
                      onOpen={() => setRowProblem(null)}
                      onConfirm={() => {
                        setRevoked(null);
                        revoke.mutate(token);
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </AdminTable>
        )}
      </Panel>
    </>
  );
}
