import Link from "next/link";
import { forwardRef, type ComponentPropsWithoutRef } from "react";
import { threadHref } from "@/lib/views/threads/href";

type ThreadLinkProps = Omit<ComponentPropsWithoutRef<typeof Link>, "href" | "prefetch"> & { threadKey: string };

/**
 * A link to a thread page. Never prefetched: a board, risks list or inbox shows hundreds of
 * threads, and prefetching each in view would make the server render them for every viewer
 * (docs/decisions/047-no-thread-prefetch.md).
 */
export const ThreadLink = forwardRef<HTMLAnchorElement, ThreadLinkProps>(function ThreadLink({ threadKey, ...props }, ref) {
  return <Link ref={ref} href={threadHref(threadKey)} prefetch={false} {...props} />;
});
