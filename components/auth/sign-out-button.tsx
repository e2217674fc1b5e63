"use client";

import { useState } from "react";
import { z } from "zod";
import { sendJson } from "@/lib/browser/send-json";
import { Button } from "@/components/ui/button";

/** Ends the session on the server, then a full navigation to sign-in (nothing of the old page stays in memory). */
export function SignOutButton() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      {error ? (
        <span role="alert" className="text-sm text-danger">
          {error}
        </span>
      ) : null}
      <Button
        disabled={pending}
        onClick={async () => {
          setPending(true);
          setError(null);
          const result = await sendJson("DELETE", "/api/v1/session", undefined, z.null());
          if (result.ok) {
            // eslint-disable-next-line @next/next/no-location-assign-relative-destination -- a full navigation: nothing of the signed-in pages stays in memory.
            window.location.assign("/sign-in");
            return;
          }
          setPending(false);
          setError(`Sign-out failed: ${result.message}`);
        }}
      >
        Sign out
      </Button>
    </>
  );
}
