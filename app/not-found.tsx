import Link from "next/link";

/**
 * Any page that does not exist, an unknown thread included. Next's built-in page
 * carries an inline <style> without the nonce, which the page policy refuses (decision 022).
 */
export default function NotFound() {
  return (
    <main id="main" className="flex flex-1 flex-col items-center justify-center gap-3 p-4">
      <h1 className="text-2xl font-bold">404</h1>
      <p>This page could not be found.</p>
      <Link href="/" prefetch={false} className="text-link underline">
        Back to the board
      </Link>
    </main>
  );
}
