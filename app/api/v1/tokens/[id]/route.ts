import { revokeApiToken } from "@/lib/auth/tokens";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";

/** DELETE /api/v1/tokens/{id} (admin): revokes; the next request with that token is refused. */
export const DELETE = personRoute<{ id: string }>("admin", async ({ params, person }) =>
  jsonResponse(await revokeApiToken(params.id, person.username)),
);
