import { z } from "zod";
import { BatonError } from "@/lib/core/errors";
import { defineRoute, type HttpMethod } from "@/lib/http/route";

/** Any path under /api that no route serves: the API's error body, not an HTML page. */
const unknownPath = (method: HttpMethod) =>
  defineRoute({
    method,
    path: "/api/{...path}",
    summary: "Any path under /api that no route serves: 404 with the error body, not an HTML page.",
    auth: { kind: "public" },
    params: z.object({ path: z.array(z.string()) }),
    response: { kind: "none" },
    errors: ["not_found"],
    handler: ({ request }) => {
      throw new BatonError("not_found", `No API route at ${new URL(request.url).pathname}; see docs/api.md for the endpoints.`);
    },
  });

export const GET = unknownPath("GET");
export const POST = unknownPath("POST");
export const PUT = unknownPath("PUT");
export const PATCH = unknownPath("PATCH");
export const DELETE = unknownPath("DELETE");
