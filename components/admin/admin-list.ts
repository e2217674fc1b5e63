"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { tokenListSchema, userListSchema } from "@/lib/auth/dto";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { addRow } from "@/lib/browser/rows";
import type { SendResult } from "@/lib/browser/send-json";
import { useLiveQuery } from "@/lib/browser/use-live-query";
import { webhookListDto } from "@/lib/notify/dto";
import { useFormProblem } from "@/components/ui/form-panel";

/** An admin list: its cache key and its URL come from one name, so every form and row action updates the list it reads. */
export interface AdminResource<T> {
  queryKey: readonly [string];
  url: string;
  schema: z.ZodType<T[]>;
  /** Names it in the error shown ("the tokens"). */
  what: string;
}

const adminResource = <T>(name: string, schema: z.ZodType<T[]>, what: string): AdminResource<T> => ({ queryKey: [name], url: `/api/v1/${name}`, schema, what });

export const TOKENS = adminResource("tokens", tokenListSchema.transform((list) => list.tokens), "the tokens");
export const USERS = adminResource("users", userListSchema.transform((list) => list.users), "the people");
export const WEBHOOKS = adminResource("webhooks", webhookListDto.transform((list) => list.webhooks), "the webhooks");

/**
 * An admin list (tokens, people, webhooks): the server's rows first, refetched after this
 * page's own changes (no ledger stream: these change only by what an admin sends).
 * `loadedAt` (ms): when the server read `initial`; the list's `dataUpdatedAt` starts there,
 * so ages measured from it read the same on the server and in the browser.
 */
export function useAdminList<T>(resource: AdminResource<T>, initial: T[], loadedAt: number) {
  const query = useLiveQuery({ ...resource, initialData: initial, initialDataUpdatedAt: loadedAt, followLedger: false });
  return { ...query, data: query.data ?? initial };
}

type ListUpdate<T> = (list: T[] | undefined) => T[] | undefined;

/**
 * An action on one row of an admin list (revoke, change, delete). A refusal or a failure
 * becomes `onProblem`, headed by `failed` ("Could not revoke ci"); an answer goes into the
 * cached list at once (`update`), and the list is refetched either way.
 */
export function useRowAction<T, Variables, Answer>({
  resource,
  send,
  failed,
  labels = {},
  onProblem,
  update,
  onDone,
}: {
  resource: AdminResource<T>;
  send: (variables: Variables) => Promise<SendResult<Answer>>;
  failed: (variables: Variables) => string;
  labels?: Record<string, string>;
  onProblem: (problem: Problem | null) => void;
  update: (answer: Answer, variables: Variables) => ListUpdate<T>;
  onDone?: (answer: Answer, variables: Variables) => void;
}) {
  const queryClient = useQueryClient();
  return useMutation<SendResult<Answer>, Error, Variables>({
    mutationFn: send,
    onMutate: () => onProblem(null),
    onSuccess: (result, variables) => {
      if (!result.ok) return onProblem(problemOf(result, labels, `${failed(variables)}:`));
      queryClient.setQueryData<T[]>(resource.queryKey, update(result.data, variables));
      onDone?.(result.data, variables);
    },
    onError: (error, variables) => onProblem(localProblem([], `${failed(variables)}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: resource.queryKey }),
  });
}

/**
 * A form that adds a row to an admin list: `add` sends and returns the answer, whose row
 * (`rowOf`) goes into the cached list at once; the refetch then brings anyone else's changes.
 * A refusal or a failure becomes the form's problem and `add` returns null.
 */
export function useAddForm<T extends { id: string }, Input, Answer>({
  resource,
  labels,
  send,
  rowOf,
  at = "last",
  failed,
}: {
  resource: AdminResource<T>;
  labels: Record<string, string>;
  send: (input: Input) => Promise<SendResult<Answer>>;
  rowOf: (answer: Answer) => T;
  at?: "first" | "last";
  /** Said when sending throws without a message. */
  failed: string;
}) {
  const form = useFormProblem(labels);
  const queryClient = useQueryClient();
  const mutation = useMutation({
    mutationFn: send,
    onSuccess: (result) => {
      if (result.ok) queryClient.setQueryData<T[]>(resource.queryKey, addRow(rowOf(result.data), at));
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: resource.queryKey }),
  });
  return { form, pending: mutation.isPending, add: (input: Input) => form.send(() => mutation.mutateAsync(input), failed) };
}
