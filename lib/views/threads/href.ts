/** The thread page's URL: keys hold "/", "#" and "@", so they travel encoded. */
export function threadHref(key: string): string {
  return `/threads/${encodeURIComponent(key)}`;
}
