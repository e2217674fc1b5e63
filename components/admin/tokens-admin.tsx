"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { tokenListSchema, tokenSummarySchema, type TokenSummary } from "@/lib/auth/dto";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { replaceRow } from "@/lib/browser/rows";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import { Alert, Done, FormAlert } from "@/components/ui/alert";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";
import { useAdminList } from "./admin-list";
import { CreateTokenForm, TOKENS_KEY } from "./create-token-form";

const HEAD = "py-1 pr-4 font-medium";
const CELL = "py-1.5 pr-4";

/** The token admin: the list (never a secret) with revoke, and a form that creates a token and shows it once. */
export function TokensAdmin({ initialTokens, loadedAt }: { initialTokens: TokenSummary[]; loadedAt: number }) {
  const queryClient = useQueryClient();
  const tokens = useAdminList({
    queryKey: TOKENS_KEY,
    url: "/api/v1/tokens",
    schema: tokenListSchema.transform((list) => list.tokens),
    what: "the tokens",
    initial: initialTokens,
    loadedAt,
  });
  const now = tokens.dataUpdatedAt;
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);

  const revoke = useMutation<SendResult<TokenSummary>, Error, TokenSummary>({
    mutationFn: (token) => sendJson("DELETE", `/api/v1/tokens/${encodeURIComponent(token.id)}`, undefined, tokenSummarySchema),
    onMutate: () => {
      setRowProblem(null);
      setRevoked(null);
    },
    onSuccess: (result, token) => {
      if (!result.ok) {
        setRowProblem(problemOf(result, {}, `Could not revoke ${token.name}:`));
        return;
      }
      setRevoked(`Revoked ${token.name}: requests with it are refused from now on.`);
      queryClient.setQueryData<TokenSummary[]>(TOKENS_KEY, replaceRow(result.data));
    },
    onError: (error, token) => setRowProblem(localProblem([], `Could not revoke ${token.name}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY }),
  });

  return (
    <>
      <CreateTokenForm />
      <Panel headingId="tokens-heading" title="API tokens">
        <div className="mb-2 flex flex-col gap-2 empty:hidden">
          <FormAlert problem={rowProblem} />
          <Done>{revoked}</Done>
          {tokens.isError ? <Alert>The list could not be refreshed: {tokens.error.message}</Alert> : null}
        </div>
        {tokens.data.length === 0 ? (
          <p className="text-sm text-muted">No tokens yet. Agents and scripts need one to send packets.</p>
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">API tokens</caption>
              <thead className="text-xs text-muted">
                <tr>
                  {["Name", "Token", "Scopes", "Project", "Created", "Last used", "Revoked"].map((heading) => (
                    <th key={heading} scope="col" className={HEAD}>
                      {heading}
                    </th>
                  ))}
                  <th scope="col" className="py-1 font-medium">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
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
                          onConfirm={() => revoke.mutate(token)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
    </>
  );
}
